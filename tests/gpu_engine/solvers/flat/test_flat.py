"""The flat-cart solver: flatness and its UFL against the spec's reference pricing, proofs
against brute force, the bound never above the optimum, branch and bound where the root leaves
a gap, and refusals of carts that are not flat."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_engine import CartProblem
from gpu_engine.problem import CapacityError, ProblemError
from gpu_engine.reference import reference_brute_force, reference_cost
from gpu_engine.solvers.flat.data import INF, flat_data, is_flat
from gpu_engine.solvers.flat.solve import solve_flat, solve_flat_solution
from tests.gpu_engine.strategies import carts


@st.composite
def flat_carts(draw: st.DrawFn) -> dict:
    """Carts whose merchants are mostly flat, at its edges: base == per, zero fees, thresholds
    of 0 or out of reach, discounts of 0 bp or out of reach; now and then one that is not."""
    n_items = draw(st.integers(1, 5))
    n_merchants = draw(st.integers(1, 4))
    items = [{"id": f"i{i}", "quantity": draw(st.integers(1, 3))} for i in range(n_items)]
    merchants = []
    for m in range(n_merchants):
        per = draw(st.sampled_from([0, 0, 50, 100]))
        base = per + draw(st.sampled_from([0, 150, 499, 800, 2500]))
        if draw(st.integers(0, 9)) == 0:
            base = max(0, per - 30)
        free_over = draw(st.sampled_from([None, None, None, 0, 10**7, 3000]))
        discount = draw(
            st.sampled_from(
                [
                    None,
                    None,
                    {"min_units": 50, "basis_points": 2000},
                    {"min_units": 2, "basis_points": 0},
                    {"min_units": 2, "basis_points": 1000},
                ]
            )
        )
        shipping = {"base_fee": base, "per_extra_unit": per, "free_over": free_over}
        merchants.append({"id": f"m{m}", "shipping": shipping, "discount": discount})
    offers = []
    for item in items:
        chosen = draw(st.lists(st.integers(0, n_merchants - 1), min_size=1, unique=True))
        for m in chosen:
            price = draw(st.sampled_from([0, 1, 250, 999, 3000]) | st.integers(0, 2000))
            offers.append({"item": item["id"], "merchant": f"m{m}", "price": price, "stock": None})
    return {"items": items, "merchants": merchants, "offers": offers}


def _assignments(problem: CartProblem):
    lines = [np.flatnonzero(row >= 0) for row in problem.price]
    for combo in itertools.product(*lines):
        yield np.array(combo, dtype=np.int64)


def _ufl_cost(problem: CartProblem, choice: np.ndarray) -> int:
    data = flat_data(problem)
    rows = np.arange(problem.n_items)
    return int(data.fee[np.unique(choice)].sum() + data.cost[rows, choice].sum())


def _check_against_reference(cart: dict) -> None:
    problem = CartProblem.from_dict(cart)
    if not is_flat(problem):
        with pytest.raises(CapacityError):
            solve_flat(problem)
        return
    # Flat means the UFL prices every assignment as the spec does.
    for choice in _assignments(problem):
        assignment = {
            problem.item_ids[i]: problem.merchant_ids[m] for i, m in enumerate(choice.tolist())
        }
        assert _ufl_cost(problem, choice) == reference_cost(cart, assignment)
    best, _ = reference_brute_force(cart)
    result = solve_flat(problem)
    assert result.stats["root_bound"] <= best
    assert result.bound <= best <= result.total
    assert result.optimal and result.total == best == result.bound


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(flat_carts())
def test_flat_carts_are_solved_to_the_brute_force_optimum(cart):
    _check_against_reference(cart)


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(carts(max_items=4, max_merchants=4))
def test_flatness_holds_on_the_general_carts_it_accepts(cart):
    # The shared strategy's edges (thresholds near subtotals, 100% discounts, per > base).
    _check_against_reference(cart)


def _dense(seed: int, n: int, m: int) -> CartProblem:
    """Every store sells every line; fees comparable to a line's price: the dual ascent's
    bound is often below the optimum here."""
    rng = np.random.default_rng(seed)
    fees = rng.integers(1000, 3000, size=m).tolist()
    prices = rng.integers(1000, 2000, size=(n, m)).tolist()
    return CartProblem.from_dict(
        {
            "items": [{"id": f"i{i}", "quantity": 1} for i in range(n)],
            "merchants": [
                {"id": f"m{j}", "shipping": {"base_fee": fees[j], "per_extra_unit": 0}}
                for j in range(m)
            ],
            "offers": [
                {"item": f"i{i}", "merchant": f"m{j}", "price": prices[i][j]}
                for i in range(n)
                for j in range(m)
            ],
        }
    )


def _subset_optimum(problem: CartProblem) -> int:
    """The UFL optimum over every set of open stores."""
    data = flat_data(problem)
    best = INF
    for r in range(1, data.n_merchants + 1):
        for subset in itertools.combinations(range(data.n_merchants), r):
            cols = list(subset)
            best = min(best, int(data.fee[cols].sum() + data.cost[:, cols].min(axis=1).sum()))
    return best


# Seeds of 16 x 12 dense carts where the root's answer is above the optimum: branch and bound
# both finds the optimum and proves it.
@pytest.mark.parametrize("seed", [15, 18, 19, 31, 53])
def test_branch_and_bound_finds_and_proves_the_optimum(seed):
    problem = _dense(seed, 16, 12)
    best = _subset_optimum(problem)
    root = solve_flat(problem, max_nodes=0)
    assert not root.optimal and root.bound < best < root.total
    assert root.stats["cut"] and root.stats["proof"] is None
    result = solve_flat(problem)
    assert result.stats["nodes"] > 0 and result.stats["proof"] == "branch and bound"
    assert result.optimal and result.total == result.bound == best


def test_a_cut_search_reports_its_best_and_a_bound():
    problem = _dense(45, 20, 12)
    best = _subset_optimum(problem)
    cut = solve_flat(problem, max_nodes=2)
    assert cut.bound <= best <= cut.total
    assert cut.optimal == (cut.total == cut.bound)
    solution = solve_flat_solution(problem, budget_ms=1000)
    assert solution.optimal and solution.total == best and solution.gap == 0.0
    assert solution.algorithm == "flat" and solution.stats["bound"] == best


def test_a_warm_start_is_taken_when_cheaper_and_checked():
    problem = _dense(15, 16, 12)
    optimum = solve_flat(problem)
    seeded = solve_flat(problem, warm_start=optimum.choice, max_nodes=0)
    assert seeded.stats["warm_total"] == optimum.total == seeded.total
    with pytest.raises(ProblemError, match="warm_start"):
        solve_flat(problem, warm_start=[0, 1])
    with pytest.raises(ProblemError, match="warm_start"):
        solve_flat(problem, warm_start=np.full(16, 99))


def _one_merchant(shipping: dict, discount: dict | None = None) -> CartProblem:
    return CartProblem.from_dict(
        {
            "items": [{"id": "a", "quantity": 2}, {"id": "b", "quantity": 1}],
            "merchants": [{"id": "m", "shipping": shipping, "discount": discount}],
            "offers": [
                {"item": "a", "merchant": "m", "price": 500},
                {"item": "b", "merchant": "m", "price": 700},
            ],
        }
    )


@pytest.mark.parametrize(
    ("shipping", "discount", "field"),
    [
        ({"base_fee": 499, "per_extra_unit": 0}, {"min_units": 3, "basis_points": 500},
         "merchants[0].discount"),
        ({"base_fee": 499, "per_extra_unit": 0, "free_over": 1500}, None,
         "merchants[0].shipping.free_over"),
        ({"base_fee": 100, "per_extra_unit": 200}, None, "merchants[0].shipping"),
    ],
)  # fmt: skip
def test_carts_that_are_not_flat_are_refused_naming_the_merchant(shipping, discount, field):
    problem = _one_merchant(shipping, discount)
    assert not is_flat(problem)
    with pytest.raises(CapacityError) as refused:
        solve_flat_solution(problem)
    assert refused.value.field == field and "flat" in refused.value.reason


@pytest.mark.parametrize(
    ("shipping", "discount", "total"),
    [
        # A discount out of reach (3 units at most), a threshold out of reach (1,700 at most).
        ({"base_fee": 499, "per_extra_unit": 50}, {"min_units": 4, "basis_points": 500}, 2299),
        ({"base_fee": 499, "per_extra_unit": 0, "free_over": 1701}, None, 2199),
        # A threshold every shipment reaches (its cheapest line alone is 700 of goods).
        ({"base_fee": 499, "per_extra_unit": 0, "free_over": 700}, None, 1700),
    ],
)
def test_unreachable_rules_and_always_free_shipping_are_flat(shipping, discount, total):
    problem = _one_merchant(shipping, discount)
    assert is_flat(problem)
    result = solve_flat(problem)
    assert result.optimal and result.total == total
