"""The LP bound on version 2 carts (nodes, weight tiers, per-kg over): never above the optimum,
beyond HiGHS's range no bound at all."""

import pytest

from gpu_engine import CartProblem
from gpu_engine.bounds.lp import lp_bound
from gpu_engine.fuzz.v2_carts import random_v2_cart
from gpu_engine.reference import reference_brute_force_v2
from gpu_engine.solvers.milp.model import highs_trusted
from gpu_engine.solvers.milp.runner import MONEY_STATUS


def _check(seed: int, cents: int) -> None:
    cart = random_v2_cart(seed, 3 + seed % 5, cents=cents)
    problem = CartProblem.from_dict(cart)
    best, _ = reference_brute_force_v2(cart)
    result = lp_bound(problem)
    if not highs_trusted(problem):
        assert result.bound is None and result.status == MONEY_STATUS
        return
    assert result.bound is not None and 0 <= result.bound <= best


@pytest.mark.parametrize("cents", [1, 100, 100_000])
@pytest.mark.parametrize("seed", range(20))
def test_the_lp_bound_never_exceeds_the_v2_optimum(seed, cents):
    _check(seed, cents)


@pytest.mark.slow
@pytest.mark.parametrize("cents", [1, 100, 3_000, 100_000])
@pytest.mark.parametrize("seed", range(20, 120))
def test_the_lp_bound_never_exceeds_the_optimum_on_many_v2_carts(seed, cents):
    _check(seed, cents)


def test_the_lp_bound_on_a_threshold_two_nodes_reach():
    """The LP may free shipping fractionally; its bound stays at or under the optimum, and on
    a larger cart it is close (the program's relaxation is tight where lines are integral)."""
    cart = random_v2_cart(3, 40, n_merchants=6, offers=(2, 4))
    problem = CartProblem.from_dict(cart)
    from gpu_engine.solvers.milp.runner import solve_milp

    optimum = solve_milp(problem)
    assert optimum.optimal
    result = lp_bound(problem)
    assert result.bound is not None and result.bound <= optimum.total
    assert result.bound >= 0.9 * optimum.total
