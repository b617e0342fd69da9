"""The issue's edge cases, for every exact solver (GPU ones in the CUDA simulator in CI)."""

import pytest

from gpu_engine import CartProblem, ProblemError, solve
from gpu_engine.reference import reference_brute_force, reference_cost

SOLVERS = ["cpu-full", "gpu-full", "dp", "cpu-dp", "gpu-dp", "auto"]


def _merchant(mid, base=499, extra=100, free_over=None, discount=None):
    return {
        "id": mid,
        "shipping": {"base_fee": base, "per_extra_unit": extra, "free_over": free_over},
        "discount": discount,
    }


def _cart(items, merchants, offers):
    return {
        "items": [{"id": i, "quantity": q} for i, q in items],
        "merchants": merchants,
        "offers": [{"item": i, "merchant": m, "price": p, "stock": s} for i, m, p, s in offers],
    }


CASES = {
    "one-line": _cart(
        [("a", 1)],
        [_merchant("x"), _merchant("y", 0)],
        [("a", "x", 100, None), ("a", "y", 650, None)],
    ),
    "one-merchant": _cart(
        [("a", 2), ("b", 1)], [_merchant("x")], [("a", "x", 100, None), ("b", "x", 50, None)]
    ),
    "ties": _cart(
        [("a", 1), ("b", 1)],
        [_merchant("x"), _merchant("y")],
        [
            ("a", "x", 100, None),
            ("a", "y", 100, None),
            ("b", "x", 100, None),
            ("b", "y", 100, None),
        ],
    ),
    "zero-prices": _cart(
        [("a", 3), ("b", 1)],
        [_merchant("x", 0, 0), _merchant("y", 10, 900)],
        [("a", "x", 0, None), ("a", "y", 0, None), ("b", "x", 5, None), ("b", "y", 0, None)],
    ),
    "free-exactly-at-threshold": _cart(
        [("a", 1), ("b", 1)],
        [_merchant("x", 700, 0, 5000), _merchant("y", 0, 0)],
        [
            ("a", "x", 4000, None),
            ("b", "x", 1000, None),
            ("a", "y", 4300, None),
            ("b", "y", 1300, None),
        ],
    ),
    "discount-exactly-at-min-units": _cart(
        [("a", 2), ("b", 1)],
        [_merchant("x", 0, 0, None, {"min_units": 3, "basis_points": 1000}), _merchant("y", 0, 0)],
        [
            ("a", "x", 1000, None),
            ("b", "x", 1000, None),
            ("a", "y", 950, None),
            ("b", "y", 950, None),
        ],
    ),
    "stock-equal-to-quantity": _cart(
        [("a", 3)],
        [_merchant("x", 0, 0), _merchant("y", 0, 0)],
        [("a", "x", 100, 3), ("a", "y", 90, 2)],
    ),
    "quantity-above-one": _cart(
        [("a", 4), ("b", 2)],
        [_merchant("x", 300, 250, 3000), _merchant("y", 500, 0)],
        [
            ("a", "x", 400, None),
            ("a", "y", 420, None),
            ("b", "x", 700, None),
            ("b", "y", 650, None),
        ],
    ),
}


@pytest.mark.parametrize("algorithm", SOLVERS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_edge_case(case, algorithm):
    cart = CASES[case]
    best, _ = reference_brute_force(cart)
    solution = solve(CartProblem.from_dict(cart), algorithm=algorithm)
    assert solution.total == best and solution.optimal
    assert reference_cost(cart, solution.assignment) == best
    assert sum(c.cost for c in solution.breakdown) == best


def test_known_answers():
    # At the threshold exactly: both at x is 5000 with free shipping.
    assert solve(CartProblem.from_dict(CASES["free-exactly-at-threshold"])).total == 5000
    # Three units at x earn 10%: 3000 - 300 = 2700 beats 2850 at y.
    assert solve(CartProblem.from_dict(CASES["discount-exactly-at-min-units"])).total == 2700
    # y's stock (2) is short of the quantity (3): only x is eligible.
    assert solve(CartProblem.from_dict(CASES["stock-equal-to-quantity"])).assignment == {"a": "x"}


def test_infeasible_lines_are_listed():
    cart = _cart(
        [("a", 2), ("b", 1), ("c", 1)],
        [_merchant("x")],
        [("a", "x", 100, 1), ("b", "x", 100, None)],
    )
    with pytest.raises(ProblemError) as info:
        CartProblem.from_dict(cart)
    assert info.value.value == ["a", "c"]


def test_unknown_algorithm_is_a_problem_error():
    with pytest.raises(ProblemError) as info:
        solve(CartProblem.from_dict(CASES["one-line"]), algorithm="quantum")
    assert info.value.field == "algorithm"
