"""The fuzzer's own pricing and brute force against the engine's pricing (and the engine's
pure-Python reference): they are written apart, so agreeing on random carts means something."""

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_engine import CartProblem, ProblemError, price_assignment
from gpu_engine.fuzz.draw import fuzz_cart
from gpu_engine.fuzz.reference import (
    InvalidAssignment,
    assignment_count,
    brute_force,
    cart_total,
    eligible_merchants,
    merchant_total,
)
from gpu_engine.reference import reference_brute_force
from tests.gpu_engine.strategies import carts


def _engine_total(cart, assignment):
    problem = CartProblem.from_dict(cart)
    return sum(c.cost for c in price_assignment(problem, assignment))


def _random_assignment(rng, cart):
    return {line: rng.choice(ms) for line, ms in eligible_merchants(cart).items()}


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(cart=carts(max_items=5, max_merchants=4, max_quantity=6), seed=st.integers(0, 2**32))
def test_pricing_matches_the_engine_on_strategy_carts(cart, seed):
    assignment = _random_assignment(random.Random(seed), cart)
    assert cart_total(cart, assignment) == _engine_total(cart, assignment)


@pytest.mark.parametrize("index", range(150))
def test_pricing_matches_the_engine_on_fuzz_carts(index):
    """Fuzz carts reach what the strategies do not: money near the int64 limit, 1e9 units."""
    cart = fuzz_cart(7, index).cart
    try:
        CartProblem.from_dict(cart)
    except ProblemError:
        pytest.skip("past the service's money limit: refused, nothing to price")
    rng = random.Random(index)
    for _ in range(5):
        assignment = _random_assignment(rng, cart)
        assert cart_total(cart, assignment) == _engine_total(cart, assignment)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(cart=carts(max_items=4, max_merchants=3))
def test_brute_force_matches_the_engine_reference(cart):
    optimum, assignment = brute_force(cart)
    assert optimum == reference_brute_force(cart)[0]
    assert cart_total(cart, assignment) == optimum
    assert assignment_count(cart) == CartProblem.from_dict(cart).complexity


def test_spec_rules_at_their_edges():
    merchant = {
        "id": "m",
        "shipping": {"base_fee": 499, "per_extra_unit": 100, "free_over": 5000},
        "discount": {"min_units": 3, "basis_points": 10_000},
    }
    assert merchant_total(merchant, 0, 0) == 0  # ships nothing, costs nothing
    # 100% off leaves goods of 0, under the threshold: the shipping is due.
    assert merchant_total(merchant, 4000, 3) == 499 + 200
    # 2 units: no discount, 4999 < 5000 -> shipping 499 + 100.
    assert merchant_total(merchant, 4999, 2) == 4999 + 599
    assert merchant_total(merchant, 5000, 2) == 5000  # at the threshold: free
    merchant["shipping"]["free_over"] = None
    assert merchant_total(merchant, 9999, 3) == 0 + 499 + 200  # 100% off, shipping still due
    merchant["discount"] = {"min_units": 1, "basis_points": 1}
    assert merchant_total(merchant, 19_999, 1) == 19_999 - 1 + 499  # floor(19999 / 10000) = 1


def test_invalid_assignments_are_refused():
    cart = fuzz_cart(0, 1).cart
    assignment = _random_assignment(random.Random(0), cart)
    line = next(iter(assignment))
    with pytest.raises(InvalidAssignment):
        cart_total(cart, {k: v for k, v in assignment.items() if k != line})
    with pytest.raises(InvalidAssignment):
        cart_total(cart, dict(assignment, **{line: "no such merchant"}))


def test_python_ints_do_not_overflow():
    """subtotal * basis_points is formed whole, past int64, and stays exact."""
    merchant = {
        "id": "m",
        "shipping": {"base_fee": 2**61, "per_extra_unit": 2**61, "free_over": None},
        "discount": {"min_units": 1, "basis_points": 9999},
    }
    subtotal = 2**63 + 12_345
    goods = subtotal - subtotal * 9999 // 10_000
    assert merchant_total(merchant, subtotal, 3) == goods + 3 * 2**61
    merchant["discount"] = None
    assert merchant_total(merchant, subtotal, 3) == subtotal + 3 * 2**61 > np.iinfo(np.int64).max
