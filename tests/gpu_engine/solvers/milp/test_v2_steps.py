"""The large-neighbourhood steps and the two-lane portfolio on version 2 carts: never worse
than the incumbent, priced exactly, the optimum proven."""

import numpy as np
import pytest

from gpu_engine import CartProblem
from gpu_engine.fuzz.v2_carts import random_v2_cart
from gpu_engine.pricing import total_of
from gpu_engine.problem import FulfillmentUnsupported
from gpu_engine.reference import reference_brute_force_v2
from gpu_engine.solvers.milp.compact import compact_build
from gpu_engine.solvers.milp.neighbourhood import configuration_bounds, improve, lp_guide
from gpu_engine.solvers.milp.portfolio import portfolio_best


def _dearest(problem: CartProblem) -> np.ndarray:
    """Each line at its dearest eligible column: a poor incumbent."""
    rows = np.arange(problem.n_items)
    return problem.cand_merchant[rows, problem.cand_count - 1].astype(np.int64)


@pytest.mark.parametrize("seed", range(8))
def test_the_steps_never_return_more_than_the_incumbent_and_find_the_optimum(seed):
    cart = random_v2_cart(seed, 6)
    problem = CartProblem.from_dict(cart)
    best, _ = reference_brute_force_v2(cart)
    incumbent = _dearest(problem)
    result = improve(problem, incumbent, budget_ms=5000)
    assert result.total == total_of(problem, result.choice) <= total_of(problem, incumbent)
    assert result.bound is not None and result.bound <= best + 1e-6
    assert result.total >= best


def test_the_configuration_step_fixes_node_and_merchant_switches():
    problem = CartProblem.from_dict(random_v2_cart(4, 20, n_merchants=5, offers=(2, 4)))
    assert not problem.simple
    import time

    guide = lp_guide(problem, deadline=time.perf_counter() + 10)
    assert guide is not None
    switches = set(guide.switches())
    opens = {n.open for o in guide.model.fulfilled.owners for n in o.nodes if n.open >= 0}
    assert opens and opens <= switches
    fixed = configuration_bounds(guide)
    assert set(fixed.cols.tolist()) <= switches
    assert guide.merchant_open().shape == (problem.n_merchants,)


@pytest.mark.parametrize("seed", range(4))
def test_the_portfolio_proves_a_v2_cart_on_its_one_program(seed):
    cart = random_v2_cart(seed, 6)
    problem = CartProblem.from_dict(cart)
    best, _ = reference_brute_force_v2(cart)
    solution, outcome = portfolio_best(problem, budget_ms=20_000, warm_start=_dearest(problem))
    assert solution is not None and solution.optimal and solution.total == best
    assert outcome.status == "Optimal"


def test_the_compact_form_refuses_a_v2_cart():
    with pytest.raises(FulfillmentUnsupported):
        compact_build(CartProblem.from_dict(random_v2_cart(1, 5)))
