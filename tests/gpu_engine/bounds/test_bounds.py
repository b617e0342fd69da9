"""The LP relaxation's bound (gpu_engine.bounds.lp): never above the optimum, to the cent."""

import pytest
from hypothesis import given, settings

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
