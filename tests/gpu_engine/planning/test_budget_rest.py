"""Every anytime route uses its whole budget (issue 25): after HiGHS first stops unproven, after
HiGHS fails, and beyond HiGHS's trusted range, the rest of the budget goes on until it ends or
the answer is proven.

The solvers are stood in for by stubs that spend an injected clock as the real ones would (HiGHS
stops at 90% of its time, the GA stalls after ``STALL_MS`` unless it restarts, which runs to
its budget's end): the tests read the phases recorded in ``plan["ran"]``, never the wall clock.
"""

import numpy as np
import pytest

import gpu_engine.solvers.ga.solve as ga_module
import gpu_engine.solvers.milp.portfolio as portfolio
import gpu_engine.solvers.milp.runner as runner
from gpu_engine import CartProblem, solve
from gpu_engine.bench.anytime_carts import barely_free
from gpu_engine.planning import clock as clock_module
from gpu_engine.planning import tuning
from gpu_engine.planning.anytime import highs_failed, with_bound
from gpu_engine.planning.carts import random_cart
from gpu_engine.planning.profile import PowerLaw
from gpu_engine.pricing import assignment_cost
from gpu_engine.results import make_solution
from gpu_engine.solvers.milp.model import highs_trusted
from tests.gpu_engine.planning.test_anytime import GA_FIRST
from tests.gpu_engine.planning.test_planner import _FakeClock, _profile

pytestmark = pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaDeprecationWarning")

# 20 lines with thresholds and discounts: below the neighbourhood step's size (its HiGHS would
# run for real).
CART = CartProblem.from_dict(random_cart(6, 20, n_merchants=10, offers=(2, 5)))
# HiGHS predicted to prove at once: the HiGHS-first route.
QUICK = _profile(milp_switched=PowerLaw(1.0, 0.0), milp_flat=PowerLaw(1.0, 0.0))
STALL_MS = 300.0
LIMIT = "Time limit reached"


def _cost(problem: CartProblem, choice: np.ndarray) -> int:
    return int(assignment_cost(choice, problem.quantity, problem.price, *problem.merchant_params))


def _answer(problem: CartProblem, algorithm: str, ms: float, **stats):
    """The cheapest offer of every line: a valid assignment, never the optimum here."""
    choice = problem.cand_merchant[:, 0].astype(np.int64)
    return make_solution(
        problem,
        choice,
        total=_cost(problem, choice),
        optimal=False,
        algorithm=algorithm,
        device="cpu",
        elapsed_ms=ms,
        stats=stats,
    )


class Stubs:
    """The solvers the planner calls, on the planner's injected clock. ``highs`` is the status
    of every HiGHS run (``raise``: HiGHS raises), ``highs_bound`` the bound it reports."""

    def __init__(self, monkeypatch, *, highs: str = LIMIT, highs_bound: float = 0.0) -> None:
        from gpu_engine.warmup import ensure_cpu_warm

        ensure_cpu_warm()  # before the solvers are replaced
        self.clock = _FakeClock()
        self.highs, self.highs_bound = highs, highs_bound
        self.calls: list[tuple[str, dict]] = []
        monkeypatch.setattr(clock_module, "time", self.clock)
        monkeypatch.setattr(runner, "milp_best", self.milp_best)
        # Long HiGHS windows run both formulations: the same stub stands for both.
        monkeypatch.setattr(portfolio, "portfolio_best", self.milp_best)
        monkeypatch.setattr(runner, "solve_milp", self.solve_milp)
        monkeypatch.setattr(ga_module, "solve_ga", self.solve_ga)

    def spend(self, ms: float) -> None:
        self.clock.now += ms / 1e3

    def milp_best(self, problem, *, budget_ms, warm_start=None, **kwargs):
        self.calls.append(("milp", {"budget_ms": budget_ms, **kwargs}))
        if self.highs == "raise":
            self.spend(40.0)
            raise RuntimeError("HiGHS refused the program (for the test)")
        ms = 0.9 * budget_ms if self.highs == LIMIT else min(460.0, budget_ms)
        self.spend(ms)
        solution = _answer(
            problem,
            "milp",
            ms,
            highs_status=self.highs,
            bound=self.highs_bound,
            highs_bound=self.highs_bound,
            cut=False,
            build_ms=1.0,
        )
        # A bound as HiGHS reports it: a failed run's may be anything.
        solution.optimal = runner.milp_proves(solution.total, self.highs_bound)
        outcome = runner.MilpOutcome(None, self.highs_bound, self.highs, 1.0, ms, 1, 1)
        return solution, outcome

    def solve_milp(self, problem, *, budget_ms, warm_start=None, **kwargs):
        # Through the module, so that a test's own milp_best stands in here too.
        solution, _ = runner.milp_best(
            problem, budget_ms=budget_ms, warm_start=warm_start, **kwargs
        )
        return solution

    def solve_ga(self, problem, *, budget_ms, seed=0, device="cpu", bound=None, restarts=False):
        self.calls.append(("ga", {"budget_ms": budget_ms, "seed": seed, "bound": bound}))
        ms = budget_ms if restarts else min(STALL_MS, budget_ms)
        self.spend(ms)
        stop = "budget" if ms >= budget_ms else "stall"
        restarted = [{"seed": seed + 1, "stop": stop}] if restarts else []
        return _answer(problem, "ga", ms, stop=stop, restarts=restarted, lower_bound=0, seed=seed)


def _names(solution) -> list[str]:
    return [p["phase"] for p in solution.plan["ran"]]


def test_highs_first_unproven_at_its_deadline_spends_the_rest_of_the_budget(monkeypatch):
    stubs = Stubs(monkeypatch, highs_bound=1000.0)
    solution = solve(CART, budget_ms=10_000, allow_gpu=False, profile=QUICK)
    plan = solution.plan
    assert plan["order"] == "highs-first"
    # On a long budget the GA's share stops growing: HiGHS's one run gets nearly all of it.
    assert plan["ga_ms"] == pytest.approx(0.5 * tuning.HIGHS_FIRST_GA_UNTIL_MS)
    ran = plan["ran"]
    assert _names(solution) == ["milp", "cpu-ga", "milp", "cpu-ga-restarts"]
    first, ga, again, restarts = ran
    assert first["budget_ms"] == pytest.approx(10_000 - plan["ga_ms"], abs=1e-3)
    assert first["status"] == LIMIT and not first["failed"]
    # The GA gets all HiGHS left, bounded by HiGHS's bound; it stalls.
    assert ga["bound"] == 1000 and ga["stop"] == "stall"
    assert ga["budget_ms"] == pytest.approx(10_000 - 0.9 * first["budget_ms"], abs=1e-3)
    # HiGHS again, warm-started with the best answer, on what the GA left (the proof's
    # settings), then GA restarts from the next seed until the budget ends.
    assert again["warm_start"] == solution.total
    assert again["budget_ms"] == pytest.approx(ga["budget_ms"] - STALL_MS, abs=1e-3)
    assert stubs.calls[2][1]["presolve"] is False
    assert restarts["stop"] == "budget" and restarts["seed"] == 1
    assert restarts["budget_ms"] == pytest.approx(0.1 * again["budget_ms"], abs=1e-3)
    assert solution.elapsed_ms == pytest.approx(10_000)
    assert not solution.optimal and solution.gap is not None


@pytest.mark.parametrize("status", ["Solve error", "Infeasible", "HiGHS crashed", "raise"])
def test_a_highs_failure_is_a_route_that_failed(monkeypatch, status):
    """HiGHS first fails at once: its bound (here one that would "prove" anything) is not
    believed, HiGHS does not run again, and the GA uses the whole budget."""
    assert highs_failed(status)
    Stubs(monkeypatch, highs=status, highs_bound=1e12)
    solution = solve(CART, budget_ms=30_000, allow_gpu=False, profile=QUICK)
    ran = solution.plan["ran"]
    assert _names(solution) == ["milp", "cpu-ga", "cpu-ga-restarts"]
    assert ran[0]["failed"] and (status == "raise" or ran[0]["status"] == status)
    assert ran[0].get("optimal") in (None, False)
    assert ran[1]["bound"] is None and ran[1]["stop"] == "stall"
    assert ran[2]["stop"] == "budget"
    assert solution.elapsed_ms == pytest.approx(30_000)
    assert not solution.optimal


def test_a_failed_proof_after_the_ga_leaves_the_rest_to_ga_restarts(monkeypatch):
    # HiGHS predicted past half the budget (GA first), failing 460 ms into its proof.
    Stubs(monkeypatch, highs="Solve error", highs_bound=1e12)
    reach = _profile(milp_switched=PowerLaw(coef=2e4, power=0.0), milp_flat=PowerLaw(1.0, 0.0))
    solution = solve(CART, budget_ms=30_000, allow_gpu=False, profile=reach)
    assert solution.plan["order"] == "ga-first"
    ran = [p for p in solution.plan["ran"] if "skipped" not in p]
    assert [p["phase"] for p in ran] == ["cpu-ga", "milp", "cpu-ga-restarts"]
    assert ran[1]["failed"] and ran[1]["status"] == "Solve error" and not ran[1]["optimal"]
    assert ran[2]["stop"] == "budget"
    assert ran[2]["budget_ms"] == pytest.approx(30_000 - STALL_MS - 460.0, abs=1e-3)
    assert solution.elapsed_ms == pytest.approx(30_000)
    assert not solution.optimal
    assert solution.plan["proof_after_ga"]["failed"]


def test_beyond_highs_range_the_ga_keeps_going_until_the_budget(monkeypatch):
    problem = CartProblem.from_dict(barely_free(1, 14, scale=10**6))
    assert not highs_trusted(problem)
    stubs = Stubs(monkeypatch)
    solution = solve(problem, budget_ms=5_000, allow_gpu=False, profile=GA_FIRST)
    ran = solution.plan["ran"]
    assert solution.plan["order"] == "ga-first"
    assert _names(solution) == ["cpu-ga", "lns", "milp", "cpu-ga-restarts"]
    assert "exact range" in ran[1]["skipped"] and "exact range" in ran[2]["skipped"]
    assert ran[0]["stop"] == "stall" and ran[-1]["stop"] == "budget"
    assert ran[-1]["budget_ms"] == pytest.approx(5_000 - STALL_MS, abs=1e-3)
    assert all(name == "ga" for name, _ in stubs.calls)
    assert solution.elapsed_ms == pytest.approx(5_000)


@pytest.mark.slow
def test_a_proof_ends_the_rest_at_once(monkeypatch):
    """HiGHS proves on its second run: nothing runs after it (the budget is not spent for
    nothing)."""
    from gpu_engine.planning.anytime import choice_of
    from gpu_engine.solvers.dp.solve import solve_dp

    optimum = solve_dp(CART, device="cpu")
    stubs = Stubs(monkeypatch)
    real_best = stubs.milp_best

    def proves_the_second_time(problem, **kwargs):
        if len(stubs.calls) < 2:
            return real_best(problem, **kwargs)
        # The optimum, and a bound that meets it (the engine's certificate re-checks it).
        stubs.highs_bound = float(optimum.total)
        solution, outcome = real_best(problem, **kwargs)
        choice = choice_of(problem, optimum)
        proven = make_solution(
            problem,
            choice,
            total=optimum.total,
            optimal=True,
            algorithm="milp",
            device="cpu",
            elapsed_ms=solution.elapsed_ms,
            stats=solution.stats,
        )
        return proven, outcome

    monkeypatch.setattr(runner, "milp_best", proves_the_second_time)
    monkeypatch.setattr(portfolio, "portfolio_best", proves_the_second_time)
    solution = solve(CART, budget_ms=10_000, allow_gpu=False, profile=QUICK)
    assert _names(solution) == ["milp", "cpu-ga", "milp"]
    assert solution.optimal and solution.algorithm == "milp"


def test_a_bound_proves_or_tightens_the_gap():
    solution = _answer(CART, "ga", 1.0)
    total = solution.total
    assert with_bound(solution, None).optimal is False
    assert with_bound(solution, total - 10).gap == pytest.approx(10 / total)
    assert with_bound(solution, total).optimal and solution.gap is None


def test_highs_first_gives_the_ga_a_nondecreasing_time_that_stops_growing():
    """The monotone property on the HiGHS-first route: the GA's time after HiGHS is
    nondecreasing in the budget, and flat past ``HIGHS_FIRST_GA_UNTIL_MS`` of budget, so HiGHS's
    share of a long budget grows with it."""
    from gpu_engine.planning import GpuState, make_plan

    budgets = range(20, 30_000, 97)
    plans = [make_plan(CART, budget_ms=b, profile=QUICK, gpu=GpuState(False)) for b in budgets]
    assert {p.order for p in plans} == {"highs-first"}
    ga = [p.split.ga_ms for p in plans]
    assert ga == sorted(ga) and all(g <= b for g, b in zip(ga, budgets, strict=True))
    assert max(ga) == 0.5 * tuning.HIGHS_FIRST_GA_UNTIL_MS
    highs = [b - g for g, b in zip(ga, budgets, strict=True)]
    assert highs == sorted(highs)
