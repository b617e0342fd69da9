import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_engine import CartProblem, ProblemError, price_assignment
from gpu_engine.pricing import assignment_cost, merchant_cost
from gpu_engine.reference import reference_cost, reference_eligible
from tests.gpu_engine.strategies import carts


def _merchant(base=499, extra=100, free_over=None, discount=None):
    return {
        "id": "m",
        "shipping": {"base_fee": base, "per_extra_unit": extra, "free_over": free_over},
        "discount": discount,
    }


def _one_merchant_cart(lines, **merchant):
    return {
        "items": [{"id": f"i{k}", "quantity": q} for k, (q, _) in enumerate(lines)],
        "merchants": [_merchant(**merchant)],
        "offers": [
            {"item": f"i{k}", "merchant": "m", "price": p, "stock": None}
            for k, (_, p) in enumerate(lines)
        ],
    }


def _total(cart):
    problem = CartProblem.from_dict(cart)
    return sum(c.cost for c in price_assignment(problem, dict.fromkeys(problem.item_ids, "m")))


def test_spec_example_formula():
    # 2 x 1999 + 1 x 500 = 4498, 3 units: 5% off -> 4498 - 224 = 4274 < 5000, shipping 499+2*100
    cart = _one_merchant_cart(
        [(2, 1999), (1, 500)], free_over=5000, discount={"min_units": 3, "basis_points": 500}
    )
    assert _total(cart) == 4274 + 699


def test_free_shipping_exactly_at_threshold():
    assert _total(_one_merchant_cart([(1, 5000)], free_over=5000)) == 5000
    assert _total(_one_merchant_cart([(1, 4999)], free_over=5000)) == 4999 + 499


def test_threshold_applies_to_goods_after_discount():
    # 5200 - 10% = 4680 < 5000: the discount pushes the goods below the threshold.
    cart = _one_merchant_cart(
        [(2, 2600)], free_over=5000, discount={"min_units": 2, "basis_points": 1000}
    )
    assert _total(cart) == 4680 + 499 + 100


def test_discount_exactly_at_min_units():
    rule = {"min_units": 3, "basis_points": 1000}
    assert _total(_one_merchant_cart([(3, 1000)], extra=0, discount=rule)) == 2700 + 499
    assert _total(_one_merchant_cart([(2, 1000)], extra=0, discount=rule)) == 2000 + 499


def test_discount_floors_and_free_over_zero_and_zero_prices():
    rule = {"min_units": 1, "basis_points": 3333}
    assert _total(_one_merchant_cart([(1, 7)], free_over=0, discount=rule)) == 7 - 2
    assert _total(_one_merchant_cart([(4, 0)], extra=900)) == 499 + 3 * 900


def test_merchant_cost_is_exact_for_huge_subtotals():
    s = 2**61 + 12345
    assert merchant_cost(s, 1, 0, 0, -1, 1, 9999) == s - s * 9999 // 10000
    assert merchant_cost(0, 0, 499, 100, -1, 0, 0) == 0


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(carts(max_items=5, max_merchants=4), st.randoms(use_true_random=False))
def test_pricing_matches_reference(cart, rnd):
    problem = CartProblem.from_dict(cart)
    eligible = reference_eligible(cart)
    assignment = {line: rnd.choice(ms) for line, ms in eligible.items()}
    breakdown = price_assignment(problem, assignment)
    expected = reference_cost(cart, assignment)
    assert sum(c.cost for c in breakdown) == expected
    for c in breakdown:
        assert c.cost == c.subtotal - c.discount + c.shipping
        assert c.units == sum(problem.quantity[problem.item_ids.index(i)] for i in c.lines)
    choice = np.array([problem.merchant_ids.index(assignment[i]) for i in problem.item_ids])
    assert assignment_cost(choice, problem.quantity, problem.price, *problem.merchant_params) == (
        expected
    )


def test_every_assignment_of_a_small_cart_matches_reference():
    cart = {
        "items": [
            {"id": "a", "quantity": 2},
            {"id": "b", "quantity": 1},
            {"id": "c", "quantity": 3},
        ],
        "merchants": [
            {
                "id": "x",
                "shipping": {"base_fee": 100, "per_extra_unit": 300, "free_over": 4000},
                "discount": {"min_units": 4, "basis_points": 1500},
            },
            {"id": "y", "shipping": {"base_fee": 599, "per_extra_unit": 0, "free_over": None}},
        ],
        "offers": [
            {"item": i, "merchant": m, "price": p, "stock": None}
            for (i, m), p in zip(
                itertools.product("abc", "xy"), [900, 950, 0, 40, 700, 650], strict=True
            )
        ],
    }
    problem = CartProblem.from_dict(cart)
    for picks in itertools.product("xy", repeat=3):
        assignment = dict(zip("abc", picks, strict=True))
        total = sum(c.cost for c in price_assignment(problem, assignment))
        assert total == reference_cost(cart, assignment)


def test_price_assignment_refuses_bad_choices():
    cart = _one_merchant_cart([(1, 100), (2, 50)])
    cart["merchants"].append(_merchant() | {"id": "n"})
    cart["offers"].append({"item": "i0", "merchant": "n", "price": 1, "stock": 0})
    problem = CartProblem.from_dict(cart)
    with pytest.raises(ProblemError) as info:
        price_assignment(problem, {"i0": "n", "i1": "m"})
    assert info.value.field == "assignment.i0" and info.value.value == "n"
    with pytest.raises(ProblemError):
        price_assignment(problem, {"i0": "m"})
    with pytest.raises(ProblemError):
        price_assignment(problem, {"i0": "m", "i1": "m", "zz": "m"})
    with pytest.raises(ProblemError):
        price_assignment(problem, np.array([0, 7]))
    assert [c.merchant for c in price_assignment(problem, np.array([0, 0]))] == ["m"]
