"""The version 2 anytime search: GA, the LP, the lines step, HiGHS; every phase's answer is
re-priced, none is ever above the GA's, and a failing or late LP only skips its steps."""

import time

import numpy as np
import pytest

from gpu_engine import CartProblem
from gpu_engine.bench.v2_family import v2_uniform_cart
from gpu_engine.planning import fulfilled_search as search
from gpu_engine.planning.anytime import choice_of
from gpu_engine.planning.clock import Deadline, now
from gpu_engine.pricing import total_of
from gpu_engine.reference import reference_cost_v2
from gpu_engine.solvers.milp.neighbourhood import LnsResult, lines_step, lp_guide
from gpu_engine.solvers.milp.runner import solve_milp


def _named(solution):
    return {line: (m, solution.nodes[line]) for line, m in solution.assignment.items()}


@pytest.fixture(scope="module")
def cart():
    return v2_uniform_cart(40, 4, 12, 321)


@pytest.fixture(scope="module")
def problem(cart):
    return CartProblem.from_dict(cart)


def test_with_time_to_spare_the_search_proves_highs_optimum(cart, problem):
    best, ran = search.ga_lp_highs(problem, Deadline(now(), 20_000), 0, "cpu")
    assert best.optimal
    assert best.total == solve_milp(problem).total
    assert reference_cost_v2(cart, _named(best)) == best.total
    methods = [phase["method"] for phase in ran]
    assert methods[0] == "cpu-ga"
    assert methods[1:] in ([], ["lp", "lines"], ["lp", "lines", "milp"], ["milp"])


def test_the_lines_step_moves_a_poor_incumbent_and_never_raises_it(problem):
    guide = lp_guide(problem, deadline=time.perf_counter() + 20)
    assert guide is not None
    # Every line at its first eligible column: a poor but feasible start.
    start = np.array([np.flatnonzero(row >= 0)[0] for row in problem.price], dtype=np.int64)
    before = total_of(problem, start)
    result = LnsResult(choice=start.copy(), total=before, bound=guide.bound)
    lines_step(problem, guide, result, left_ms=20_000)
    assert result.total <= before
    assert total_of(problem, result.choice) == result.total
    assert result.steps[-1]["step"] == "lines"


def test_a_failing_lp_only_skips_its_steps(monkeypatch, cart, problem):
    def broken(*args, **kwargs):
        raise RuntimeError("the LP broke")

    monkeypatch.setattr("gpu_engine.solvers.milp.neighbourhood.lp_guide", broken)
    monkeypatch.setattr(search, "LP_BESIDE_CPU_CORES", 1)  # the LP in its thread
    best, ran = search.ga_lp_highs(problem, Deadline(now(), 3_000), 0, "cpu")
    assert "lp" not in [phase["method"] for phase in ran]
    assert reference_cost_v2(cart, _named(best)) == best.total


def test_an_lp_past_its_share_is_not_waited_for(monkeypatch, cart, problem):
    monkeypatch.setattr(search, "LP_ENDS_SHARE", 0.0)
    deadline = Deadline(now(), 400)
    best, ran = search.ga_lp_highs(problem, deadline, 0, "cpu")
    assert "lp" not in [phase["method"] for phase in ran]
    assert reference_cost_v2(cart, _named(best)) == best.total
    assert deadline.spent_ms() < 400 * 1.5


@pytest.mark.parametrize("budget_ms", [60, 200, 600])
def test_the_answer_is_never_above_any_phase(problem, budget_ms):
    best, ran = search.ga_lp_highs(problem, Deadline(now(), budget_ms), 0, "cpu")
    totals = [phase["total"] for phase in ran if phase.get("total") is not None]
    assert totals and best.total == min(totals)
    assert total_of(problem, choice_of(problem, best)) == best.total
