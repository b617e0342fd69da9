"""The large-neighbourhood steps: never worse than the incumbent, priced exactly, and
the optimum of the cart the GA stalls on."""

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_engine import CartProblem
from gpu_engine.bench.family_carts import FAMILIES
from gpu_engine.pricing import price_assignment
from gpu_engine.reference import reference_brute_force
from gpu_engine.solvers.milp.model import milp_point
from gpu_engine.solvers.milp.neighbourhood import (
    configuration_bounds,
    improve,
    lines_bounds,
    lp_guide,
    total_of,
)
from tests.gpu_engine.strategies import carts

# split_punish 200 lines, cart 0 (the families suite's seed 200000): the GA's answer stalls at
# 940,996 cents on the H100 and here; HiGHS proves 939,826.
SPLIT_PUNISH_OPTIMUM = 939_826


@st.composite
def carts_with_incumbents(draw: st.DrawFn):
    problem = CartProblem.from_dict(draw(carts(max_items=7, max_merchants=5)))
    picks = [
        int(problem.cand_merchant[i, draw(st.integers(0, int(problem.cand_count[i]) - 1))])
        for i in range(problem.n_items)
    ]
    return problem, np.asarray(picks, dtype=np.int64)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(carts_with_incumbents())
def test_a_step_never_returns_a_total_above_its_incumbent_and_prices_exactly(case):
    problem, incumbent = case
    result = improve(problem, incumbent, budget_ms=2000)
    assert result.total <= total_of(problem, incumbent)
    # The answer is an assignment of eligible offers, and its total is the pricing routine's.
    breakdown = price_assignment(problem, result.choice)
    assert result.total == sum(shipment.cost for shipment in breakdown)
    best, _ = reference_brute_force(problem.to_dict())
    assert result.total >= best
    if result.bound is not None:
        assert best >= result.bound - 1e-6


@settings(max_examples=30, deadline=None)
@given(carts_with_incumbents())
def test_the_lines_neighbourhood_keeps_the_incumbent_feasible(case):
    problem, incumbent = case
    guide = lp_guide(problem, deadline=time.perf_counter() + 5.0)
    assert guide is not None
    bounds = lines_bounds(guide, incumbent=incumbent)
    point = milp_point(guide.model, incumbent)
    assert np.all(point[bounds.cols] <= bounds.upper)
    # The configuration step fixes switches to 0 or 1 only.
    fixed = configuration_bounds(guide)
    assert np.all(np.isin(fixed.lower, (0.0, 1.0))) and np.array_equal(fixed.lower, fixed.upper)


def test_a_deadline_that_has_passed_returns_the_incumbent():
    problem = CartProblem.from_dict(FAMILIES["split_punish"](3, 40))
    incumbent = problem.cand_merchant[:, 0].astype(np.int64)
    result = improve(problem, incumbent, budget_ms=0.0)
    assert result.total == total_of(problem, incumbent) and result.bound is None
    assert np.array_equal(result.choice, incumbent)


@pytest.mark.slow
def test_the_configuration_step_finds_the_optimum_the_ga_stalls_short_of():
    """The LP's rounding of the merchants' open and free-shipping switches is the optimum's:
    HiGHS with them fixed finds it from any incumbent (here every line's cheapest offer)."""
    problem = CartProblem.from_dict(FAMILIES["split_punish"](200_000, 200))
    incumbent = problem.cand_merchant[:, 0].astype(np.int64)
    result = improve(problem, incumbent, budget_ms=5000)
    assert result.total == SPLIT_PUNISH_OPTIMUM
    assert [step["step"] for step in result.steps][:2] == ["lp", "configuration"]
    assert result.steps[1]["total"] == SPLIT_PUNISH_OPTIMUM
