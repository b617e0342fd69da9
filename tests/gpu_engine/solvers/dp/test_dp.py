import numpy as np
import pytest
from hypothesis import given, settings

from gpu_engine import CartProblem, solve
from gpu_engine.reference import reference_brute_force, reference_cost
from gpu_engine.solvers.dp.solve import merchant_dp_inputs, run_merchant_cpu, run_relaxed
from tests.gpu_engine.strategies import carts


def _merchant(mid, base, extra, free_over=None, discount=None):
    return {
        "id": mid,
        "shipping": {"base_fee": base, "per_extra_unit": extra, "free_over": free_over},
        "discount": discount,
    }


def _offer(item, merchant, price):
    return {"item": item, "merchant": merchant, "price": price, "stock": None}


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(carts(max_items=6, max_merchants=4))
def test_dp_equals_brute_force(cart):
    problem = CartProblem.from_dict(cart)
    best, _ = reference_brute_force(cart)
    solution = solve(problem, algorithm="cpu-dp")
    assert solution.total == best and solution.optimal
    assert reference_cost(cart, solution.assignment) == best
    exact, _ = run_merchant_cpu(problem, merchant_dp_inputs(problem))
    assert exact == best
    bound, _, priced = run_relaxed(problem)
    assert bound <= best <= priced


def test_non_subadditive_shipping_falls_back_to_the_exact_dp():
    # Relaxed DP gives A both lines as two shipments (100 + 100); one shipment really costs
    # 200 + 1000 for the extra unit, so the optimum splits A and B.
    cart = {
        "items": [{"id": "a", "quantity": 1}, {"id": "b", "quantity": 1}],
        "merchants": [_merchant("A", 0, 1000), _merchant("B", 0, 0)],
        "offers": [
            _offer("a", "A", 100),
            _offer("b", "A", 100),
            _offer("a", "B", 150),
            _offer("b", "B", 150),
        ],
    }
    problem = CartProblem.from_dict(cart)
    bound, _, priced = run_relaxed(problem)
    assert (bound, priced) == (200, 1200)
    solution = solve(problem, algorithm="cpu-dp")
    assert solution.total == 250 and solution.optimal
    assert solution.stats["path"] == "merchant-dp"
    assert "fallback" in solution.stats


def test_discount_pushing_goods_under_threshold_is_handled():
    # One shipment of both lines: 5200 - 10% = 4680 < 5000, pays 499. Two shipments of 2600
    # would each miss the threshold too; the relaxed bound and the truth must still agree
    # with brute force.
    cart = {
        "items": [{"id": "a", "quantity": 1}, {"id": "b", "quantity": 1}],
        "merchants": [
            _merchant("A", 499, 0, 5000, {"min_units": 2, "basis_points": 1000}),
            _merchant("B", 0, 0),
        ],
        "offers": [
            _offer("a", "A", 5000),
            _offer("b", "A", 200),
            _offer("a", "B", 5150),
            _offer("b", "B", 260),
        ],
    }
    best, _ = reference_brute_force(cart)
    assert solve(CartProblem.from_dict(cart), algorithm="cpu-dp").total == best


def test_relaxed_path_is_taken_and_proven_on_dense_subadditive_carts():
    rng = np.random.default_rng(3)
    cart = {
        "items": [{"id": f"i{i}", "quantity": 1} for i in range(5)],
        "merchants": [_merchant(f"m{m}", 499, 100, 5000) for m in range(6)],
        "offers": [
            _offer(f"i{i}", f"m{m}", int(rng.integers(500, 3000)))
            for i in range(5)
            for m in range(6)
        ],
    }
    solution = solve(CartProblem.from_dict(cart), algorithm="cpu-dp")
    assert solution.stats["path"] == "relaxed-partition" and solution.optimal
    assert solution.total == reference_brute_force(cart)[0]
