"""The compact formulation and the portfolio that runs it beside the extended one: each exact
against brute force, the first proof stopping the other lane, a wrong bound never a proof."""

import math

import numpy as np
import pytest
from hypothesis import given, settings

from gpu_engine import CartProblem
from gpu_engine.bench.anytime_carts import family_cart
from gpu_engine.planning.carts import random_cart
from gpu_engine.reference import reference_brute_force
from gpu_engine.solvers.milp import portfolio
from gpu_engine.solvers.milp.compact import compact_build
from gpu_engine.solvers.milp.model import choice_from_x
from gpu_engine.solvers.milp.runner import MilpOutcome, _cost, milp_run
from tests.gpu_engine.solvers.milp.test_milp import boundary_carts
from tests.gpu_engine.strategies import carts


def _compact_optimum(cart) -> tuple[int, float]:
    problem = CartProblem.from_dict(cart)
    outcome = milp_run(problem, model=compact_build(problem))
    assert outcome.status == "Optimal" and outcome.choice is not None
    return _cost(problem, outcome.choice), outcome.bound


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(carts(max_items=5, max_merchants=4))
def test_the_compact_form_equals_brute_force(cart):
    best, _ = reference_brute_force(cart)
    total, bound = _compact_optimum(cart)
    assert total == best and math.ceil(bound - 1e-4) == best


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(boundary_carts())
def test_the_compact_form_at_thresholds_and_discounts_boundaries(cart):
    best, _ = reference_brute_force(cart)
    assert _compact_optimum(cart)[0] == best


def test_its_x_columns_read_as_the_extended_forms_do():
    problem = CartProblem.from_dict(random_cart(2, 12))
    model = compact_build(problem)
    x = np.zeros(model.n_cols)
    cheapest = problem.cand_merchant[:, 0]
    x[np.flatnonzero(model.x_merchant == cheapest[model.x_line])] = 1.0
    assert np.array_equal(choice_from_x(problem, model, x[: model.x_line.size]), cheapest)


@pytest.mark.slow
def test_the_portfolio_proves_what_either_lane_proves():
    """A one-cent cart the compact form proves in seconds (the extended one took ~6 s)."""
    problem = CartProblem.from_dict(family_cart("one_cent", 2))
    solution, outcome = portfolio.portfolio_best(problem, budget_ms=30_000)
    assert solution is not None and solution.optimal and outcome.status == "Optimal"
    assert solution.total == 263_649


def _outcome(choice, bound, status="Time limit reached") -> MilpOutcome:
    return MilpOutcome(choice, bound, status, 1.0, 1.0, 1, 1)


def test_a_lane_whose_bound_passes_a_priced_answer_is_not_believed():
    problem = CartProblem.from_dict(random_cart(2, 8))
    choice = problem.cand_merchant[:, 0].astype(np.int64)
    total = _cost(problem, choice)
    merged = portfolio._merged(
        problem,
        {
            "extended": _outcome(choice, total - 50.0),
            "compact": _outcome(None, total + 10.0, status="Optimal"),  # a wrong proof
        },
    )
    assert merged.bound == total - 50.0 and merged.status != "Optimal"


def test_a_failed_lane_leaves_the_other_to_answer(monkeypatch):
    real = portfolio.milp_run

    def compact_crashes(problem, **options):
        if options.get("lane") == portfolio.COMPACT_LANE:
            raise RuntimeError("the compact lane broke")
        return real(problem, **options)

    monkeypatch.setattr(portfolio, "milp_run", compact_crashes)
    problem = CartProblem.from_dict(random_cart(4, 6, n_merchants=5, offers=(1, 3)))
    outcome = portfolio.milp_portfolio(problem, time_limit_ms=30_000)
    assert outcome.status == "Optimal" and outcome.choice is not None


@pytest.mark.parametrize("proving", ["extended", "compact"])
def test_the_first_proof_stops_the_other_lane(monkeypatch, proving):
    import threading

    stopped: list[str] = []
    problem = CartProblem.from_dict(random_cart(4, 6, n_merchants=5, offers=(1, 3)))
    choice = problem.cand_merchant[:, 0].astype(np.int64)

    def lane(problem, *, stop: threading.Event, lane: int = 0, **options):
        name = "compact" if lane == portfolio.COMPACT_LANE else "extended"
        if name == proving:
            return _outcome(choice, float(_cost(problem, choice)), status="Optimal")
        assert stop.wait(30), "the other lane's proof never stopped this one"
        stopped.append(name)
        return _outcome(None, -math.inf, status="Cut at the deadline")

    monkeypatch.setattr(portfolio, "milp_run", lane)
    outcome = portfolio.milp_portfolio(problem, time_limit_ms=60_000)
    other = "compact" if proving == "extended" else "extended"
    assert outcome.status == "Optimal" and stopped == [other]


@pytest.mark.parametrize(("highs_ms", "both"), [(500.0, False), (5_000.0, True)])
def test_highs_first_runs_both_forms_on_long_windows_only(monkeypatch, highs_ms, both):
    from gpu_engine.planning import routes, tuning
    from gpu_engine.solvers.milp import runner

    asked: list[str] = []
    real = runner.milp_best

    def recording(name):
        def run(problem, **options):
            asked.append(name)
            return real(problem, **options)

        return run

    monkeypatch.setattr(runner, "milp_best", recording("one"))
    monkeypatch.setattr(portfolio, "portfolio_best", recording("both"))
    problem = CartProblem.from_dict(random_cart(4, 6, n_merchants=5, offers=(1, 3)))
    routes.highs_first_run(problem, highs_ms)
    assert asked == ["both" if both else "one"]
    assert (highs_ms >= tuning.PORTFOLIO_MIN_MS) == both
