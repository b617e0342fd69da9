"""The LP relaxation's bound (gpu_engine.bounds.lp): never above the optimum, to the cent."""

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_engine import CartProblem
from gpu_engine.bench.family_carts import FAMILIES
from gpu_engine.bounds.lp import lp_bound
from gpu_engine.reference import reference_brute_force
from gpu_engine.solvers.milp.runner import milp_best, solve_milp
from tests.gpu_engine.strategies import carts


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(carts(max_items=5, max_merchants=4))
def test_the_lp_bound_never_exceeds_the_optimum(cart):
    best, _ = reference_brute_force(cart)
    result = lp_bound(CartProblem.from_dict(cart))
    assert result.bound is not None and 0 <= result.bound <= best


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_lp_bound_holds_on_every_family(family):
    problem = CartProblem.from_dict(FAMILIES[family](7, 12))
    optimum = solve_milp(problem)
    assert optimum.optimal
    result = lp_bound(problem)
    assert result.bound is not None and result.bound <= optimum.total


def test_a_bound_cut_by_its_deadline_is_no_bound(monkeypatch):
    import gpu_engine.solvers.milp.runner
    from gpu_engine.solvers.milp import highs_process

    # The deadline passes while HiGHS's solver process works on the LP.
    monkeypatch.setattr(
        highs_process._Child,
        "reply_for",
        lambda child, job, timeout_s, stop=None: highs_process.CUT,
    )
    problem = CartProblem.from_dict(FAMILIES["mixed"](1, 30))
    result = lp_bound(problem, time_limit_ms=50)
    assert result.bound is None and result.status == gpu_engine.solvers.milp.runner.CUT_STATUS


@st.composite
def one_merchant_carts(draw):
    """Every line at one merchant: an integral assignment. Its threshold and discount are drawn
    near the cart's goods and units; an earned discount comes without a threshold (where both
    apply the LP may still split the discount's floor), and a threshold with a per-unit fee (a
    flat fee's threshold has no perspective row, see the model's docstring)."""
    n = draw(st.integers(1, 5))
    qty = [draw(st.integers(1, 3)) for _ in range(n)]
    price = [draw(st.integers(0, 3000)) for _ in range(n)]
    goods, units = sum(q * p for q, p in zip(qty, price, strict=True)), sum(qty)
    free_over = draw(st.sampled_from([None, goods, goods + 1, max(0, goods - 1), 2 * goods + 1]))
    if free_over is None:
        min_units = draw(st.integers(1, units + 2))
    else:
        min_units = draw(st.integers(units + 1, units + 3))
    discount = draw(
        st.sampled_from(
            [None, {"min_units": min_units, "basis_points": draw(st.integers(0, 10_000))}]
        )
    )
    shipping = {
        "base_fee": draw(st.sampled_from([0, 299, 800])),
        "per_extra_unit": draw(st.sampled_from([100, 900] if free_over else [0, 100, 900])),
        "free_over": free_over,
    }
    return {
        "items": [{"id": f"i{i}", "quantity": q} for i, q in enumerate(qty)],
        "merchants": [{"id": "m", "shipping": shipping, "discount": discount}],
        "offers": [
            {"item": f"i{i}", "merchant": "m", "price": p, "stock": None}
            for i, p in enumerate(price)
        ],
    }


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(one_merchant_carts())
def test_the_lp_is_exact_where_the_assignment_is_forced(cart):
    """The perspective rows: with every line's merchant fixed, the relaxation can neither half
    open a free-shipping threshold the goods miss (``sum goods * w >= free_over * f``, ``w <=
    f``, where ``per_extra_unit > 0``) nor half earn a discount the units miss (``sum units * z
    >= min_units * d``). The aggregated rows alone left ``f = goods / free_over`` and ``d =
    units / min_units``."""
    best, _ = reference_brute_force(cart)
    assert lp_bound(CartProblem.from_dict(cart)).bound == best


@st.composite
def capped_carts(draw):
    """Lines whose goods alone reach a merchant's free-shipping threshold, quantities at or past
    a discount's ``min_units``, 100% and coarse discounts (``bp`` a multiple of 2500): the
    corners of the capped rows and of the discount floor's slack (``model._floor_slack``)."""
    n_items, n_merchants = draw(st.integers(1, 5)), draw(st.integers(1, 3))
    merchants = []
    for m in range(n_merchants):
        discount = draw(
            st.sampled_from(
                [
                    None,
                    {
                        "min_units": draw(st.integers(1, 6)),
                        "basis_points": draw(
                            st.sampled_from([100, 2500, 5000, 7500, 10_000, 3333])
                        ),
                    },
                ]
            )
        )
        shipping = {
            "base_fee": draw(st.sampled_from([0, 300, 900])),
            "per_extra_unit": draw(st.sampled_from([0, 0, 150, 1200])),
            "free_over": draw(st.sampled_from([None, 1, 2, 500, 1500, 4000])),
        }
        merchants.append({"id": f"m{m}", "shipping": shipping, "discount": discount})
    items, offers = [], []
    for i in range(n_items):
        items.append({"id": f"i{i}", "quantity": draw(st.integers(1, 6))})
        chosen = draw(st.lists(st.integers(0, n_merchants - 1), min_size=1, unique=True))
        for m in chosen:
            price = draw(st.sampled_from([0, 100, 400, 1000, 2500, 3001]))
            offers.append({"item": f"i{i}", "merchant": f"m{m}", "price": price, "stock": None})
    return {"items": items, "merchants": merchants, "offers": offers}


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(capped_carts())
def test_the_capped_rows_keep_the_bounds_valid_and_the_milp_exact(cart):
    best, _ = reference_brute_force(cart)
    problem = CartProblem.from_dict(cart)
    result = lp_bound(problem)
    assert result.bound is not None and 0 <= result.bound <= best
    solution = solve_milp(problem)
    assert solution.optimal and solution.total == best
    # The proof route's options (no presolve, no primal heuristics) prove the same optimum.
    proof, _ = milp_best(
        problem, warm_start=_choice(problem, solution), presolve=False, heuristics=False
    )
    assert proof is not None and proof.optimal and proof.total == best


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    bp=st.integers(1, 10_000),
    goods=st.lists(st.integers(0, 5000), min_size=1, max_size=6),
)
def test_the_discount_floor_slack_covers_every_subset(bp, goods):
    """``bp * S / 10000`` never exceeds its floor by more than the slack, for every subset sum
    ``S`` of the merchant's goods (so the floor row cuts off no assignment)."""
    from gpu_engine.solvers.milp.model import _floor_slack

    slack = _floor_slack(bp, np.array(goods))
    assert 0.0 <= slack <= 0.9999
    for k in range(1, len(goods) + 1):
        for subset in combinations(goods, k):
            excess = (bp * sum(subset) % 10_000) / 10_000
            assert excess <= slack + 1e-12
    if bp == 10_000:
        assert slack == 0.0


def _choice(problem, solution):
    index = {merchant: m for m, merchant in enumerate(problem.merchant_ids)}
    return np.array([index[solution.assignment[item]] for item in problem.item_ids])


def _two_merchant_cart(bp: int, free_over: int, price_x: int, price_y: int) -> dict:
    x = {
        "id": "x",
        "shipping": {"base_fee": 300, "per_extra_unit": 0, "free_over": free_over},
        "discount": {"min_units": 2, "basis_points": bp},
    }
    y = {
        "id": "y",
        "shipping": {"base_fee": 0, "per_extra_unit": 0, "free_over": None},
        "discount": None,
    }
    offers = [
        {"item": item, "merchant": merchant, "price": price, "stock": None}
        for item in ("a", "b")
        for merchant, price in (("x", price_x), ("y", price_y))
    ]
    items = [{"id": "a", "quantity": 1}, {"id": "b", "quantity": 2}]
    return {"items": items, "merchants": [x, y], "offers": offers}


@pytest.mark.parametrize("bp", [100, 3333, 5000, 10_000])
@pytest.mark.parametrize("free_over", [1, 2, 99, 150])
@pytest.mark.parametrize(("price_x", "price_y"), [(100, 50), (100, 400), (101, 90)])
def test_the_discounted_goods_row_cuts_off_no_assignment(bp, free_over, price_x, price_y):
    """A threshold below the discount floor's slack (``rate * F < r``): the row's drop without
    ``d`` is clamped at 0, or an unused merchant (``S = f = d = 0``) would be infeasible and the
    MILP would claim a wrong optimum (281 "proven" against 270 before the clamp)."""
    cart = _two_merchant_cart(bp, free_over, price_x, price_y)
    best, _ = reference_brute_force(cart)
    problem = CartProblem.from_dict(cart)
    solution = solve_milp(problem)
    assert solution.optimal and solution.total == best
    result = lp_bound(problem)
    assert result.bound is not None and result.bound <= best
