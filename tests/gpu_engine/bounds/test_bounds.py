"""The LP relaxation's bound (gpu_engine.bounds.lp): never above the optimum, to the cent."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_engine import CartProblem
from gpu_engine.bench.family_carts import FAMILIES
from gpu_engine.bounds.lp import lp_bound
from gpu_engine.reference import reference_brute_force
from gpu_engine.solvers.milp.runner import solve_milp
from tests.gpu_engine.strategies import carts


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

    monkeypatch.setattr(gpu_engine.solvers.milp.runner, "_await", lambda job, timeout_s: False)
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
