"""The planner's decisions on synthetic rate profiles (fast GPU, no GPU, busy GPU) and end to
end through ``gpu_engine.solve``."""

import dataclasses
import logging
import math

import pytest
from hypothesis import given, settings

from gpu_engine import CartProblem, solve
from gpu_engine.bench.instances import seed_cart, uniform_cart
from gpu_engine.planning import GpuState, executor, make_plan, tuning
from gpu_engine.planning import clock as clock_module
from gpu_engine.planning import plan as plan_module
from gpu_engine.planning.carts import random_cart
from gpu_engine.planning.profile import PowerLaw, RateProfile
from gpu_engine.problem import CapacityError
from gpu_engine.reference import reference_brute_force
from gpu_engine.results import SolverInconsistency
from tests.gpu_engine.strategies import carts

# Planning a GPU estimate imports the GA kernels' module, and with it numba.cuda.random, whose
# simulator build passes a deprecated numba argument.
pytestmark = pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaDeprecationWarning")

SLOW = PowerLaw(coef=1e6, power=1.0)


def _profile(**changes) -> RateProfile:
    """Every method slow unless a test makes it fast."""
    base = RateProfile(
        cpu_full_rate=1e6,
        cpu_full_overhead_ms=0.1,
        gpu_full_rate=1e6,
        gpu_full_overhead_ms=1.0,
        relaxed_dp_rate=1.0,
        cpu_dp_rate=1.0,
        gpu_dp_rate=1.0,
        dp_overhead_ms=0.1,
        gpu_dp_overhead_ms=1.0,
        milp_flat=SLOW,
        milp_switched=SLOW,
        milp_overhead_ms=1.0,
        ga_cpu_init_ms_per_line=0.1,
        ga_gpu_init_ms=2.0,
        gpu_job_ms=200.0,
        flat_overhead_ms=1e6,
        source="test",
    )
    return dataclasses.replace(base, **changes)


# 9 lines x 8 offers: 1.3e8 assignments.
MID = CartProblem.from_dict(uniform_cart(9, 8, 24, seed=3))
BIG = CartProblem.from_dict(random_cart(1, 60))


def test_a_fast_gpu_takes_the_full_search():
    profile = _profile(gpu_full_rate=1e11)
    plan = make_plan(MID, budget_ms=500, profile=profile, gpu=GpuState(present=True))
    assert plan.method == "gpu-full"
    predicted = {e.method: e.predicted_ms for e in plan.estimates}
    assert predicted["gpu-full"] < predicted["cpu-full"]
    assert plan.to_dict()["predicted_ms"]["gpu-full"] == predicted["gpu-full"]


def test_without_a_gpu_only_cpu_methods_are_planned():
    profile = _profile(gpu_full_rate=1e11, cpu_full_rate=1e9)
    plan = make_plan(MID, budget_ms=500, profile=profile, gpu=GpuState(present=False))
    assert plan.method == "cpu-full"
    notes = plan.to_dict()["notes"]
    assert notes["gpu-full"] == notes["gpu-dp"] == notes["gpu-ga"] == "no GPU"
    plan = make_plan(BIG, budget_ms=100, profile=profile, gpu=GpuState(present=False))
    assert plan.method == "cpu-ga"


def test_a_busy_gpu_sends_the_work_to_the_cpu():
    profile = _profile(gpu_full_rate=1e11, cpu_full_rate=1e9, gpu_job_ms=300.0)
    idle = make_plan(MID, budget_ms=500, profile=profile, gpu=GpuState(present=True))
    busy = make_plan(
        MID, budget_ms=500, profile=profile, gpu=GpuState(present=True, busy=True, queue_depth=2)
    )
    assert idle.method == "gpu-full" and busy.method == "cpu-full"
    # Nothing exact fits: the GA leaves the queued GPU for the CPU.
    assert make_plan(BIG, budget_ms=100, profile=profile, gpu=GpuState(True)).method == "gpu-ga"
    assert make_plan(BIG, budget_ms=100, profile=profile, gpu=GpuState(True, True)).method == (
        "cpu-ga"
    )


def test_exact_whenever_one_is_predicted_to_fit():
    fast_milp = _profile(
        milp_switched=PowerLaw(coef=0.01, power=1.0), milp_flat=PowerLaw(coef=0.01, power=1.0)
    )
    plan = make_plan(BIG, budget_ms=1000, profile=fast_milp, gpu=GpuState(present=False))
    assert plan.method == "milp" and plan.reason.startswith("HiGHS first")
    assert plan.order == "highs-first"


def test_uninterruptible_methods_need_a_margin():
    # The seed-cart-like DP is predicted at 90% of the budget: only an interruptible method
    # may be planned that close to it.
    problem = CartProblem.from_dict(uniform_cart(8, 3, 12, seed=5))
    base = make_plan(problem, budget_ms=100, profile=_profile(), gpu=GpuState(False))
    steps_ms = {e.method: e.predicted_ms for e in base.estimates}["cpu-dp"] - 0.1
    rate = steps_ms / 90.0  # rescale the DP to take 90 ms of the 100 ms budget
    profile = _profile(cpu_dp_rate=rate, relaxed_dp_rate=rate, cpu_full_rate=1.0)
    plan = make_plan(problem, budget_ms=100, profile=profile, gpu=GpuState(False))
    assert plan.method == "cpu-ga"
    plan = make_plan(problem, budget_ms=120, profile=profile, gpu=GpuState(False))
    assert plan.method == "cpu-dp"


def test_solve_auto_records_the_plan():
    problem = CartProblem.from_dict(random_cart(2, 6, n_merchants=6, offers=(1, 4)))
    solution = solve(problem, budget_ms=500, gpu_busy=lambda: True, gpu_queue_depth=3)
    plan = solution.plan
    assert plan["method"] in {"cpu-full", "cpu-dp", "milp"} and solution.optimal
    assert plan["algorithm"] == solution.algorithm
    assert set(plan["predicted_ms"]) == {
        "cpu-full",
        "gpu-full",
        "cpu-dp",
        "flat",
        "gpu-dp",
        "milp",
        "cpu-ga",
        "gpu-ga",
    }
    assert plan["gpu"] == {"present": False, "busy": True, "queue_depth": 3}
    assert plan["budget_ms"] == 500 and plan["fallback"] is None


def test_a_method_that_cannot_run_falls_back_to_the_cpu_ga(monkeypatch, caplog):
    run = executor._run

    def refuse(method, *args, **kwargs):
        if method != "cpu-ga":
            raise CapacityError("items", 0, "refused for the test")
        return run(method, *args, **kwargs)

    monkeypatch.setattr(executor, "_run", refuse)
    problem = CartProblem.from_dict(random_cart(2, 6, n_merchants=6, offers=(1, 4)))
    solution = solve(problem, budget_ms=200)
    assert "cpu-ga ran instead" in solution.plan["fallback"]
    # A fallback is logged, not only recorded in the plan.
    assert any(
        r.levelno == logging.WARNING and "cpu-ga ran instead" in r.getMessage()
        for r in caplog.records
        if r.name == "gpu_engine.planning.executor"
    )
    # The GA answered; the time it left may have gone to proving it with the MILP.
    assert solution.algorithm in ("ga", "milp")


def test_when_the_cpu_ga_route_fails_too_the_cpu_ga_alone_answers(monkeypatch):
    # Every route fails, as the CPU GA's would where HiGHS (its neighbourhood step, its proof)
    # fails on the cart.
    def broken(method, *args, **kwargs):
        raise RuntimeError(f"{method}: HiGHS refused the cart's program (for the test)")

    monkeypatch.setattr(executor, "_run", broken)
    problem = CartProblem.from_dict(random_cart(5, 40, n_merchants=12, offers=(2, 5)))
    solution = solve(problem, budget_ms=300, allow_gpu=False)
    assert solution.algorithm == "ga" and solution.total > 0
    assert "the CPU GA alone ran" in solution.plan["fallback"]


@settings(max_examples=25, deadline=None)
@given(carts(max_items=5, max_merchants=4))
def test_small_carts_are_answered_exactly(cart):
    best, _ = reference_brute_force(cart)
    solution = solve(CartProblem.from_dict(cart), budget_ms=1000)
    assert solution.optimal and solution.total == best


def test_time_the_ga_leaves_goes_to_proving_its_answer(monkeypatch):
    # Nothing exact is predicted to fit, the MILP is within reach: half the budget for the
    # GA, then HiGHS proves the small cart's optimum with the rest.
    reach = _profile(
        milp_switched=PowerLaw(coef=300.0, power=0.0),
        milp_flat=PowerLaw(coef=5.0, power=0.0),
        cpu_full_rate=1.0,
    )
    cart = random_cart(8, 8, n_merchants=6, offers=(2, 4))
    best, _ = reference_brute_force(cart)
    problem = CartProblem.from_dict(cart)
    solve(problem, algorithm="cpu-ga", budget_ms=20)  # compilation out of the way
    solve(problem, algorithm="milp")
    solution = solve(problem, budget_ms=200, profile=reach, allow_gpu=False)
    assert solution.plan["method"] == "cpu-ga" and solution.plan["ga_share"] == 0.5
    assert solution.optimal and solution.total == best
    if solution.algorithm == "milp":
        assert "warm_start_ga" in solution.stats
    else:  # the GA met a proven bound (its own or the LP's) before HiGHS was needed
        assert solution.plan["ran"][-1]["phase"] in ("lp-bound", "milp", "cpu-ga")
    # A MILP far out of reach still leaves the GA half the budget: a larger budget always runs
    # the smaller one's GA (monotone), and the rest goes to the bound and HiGHS.
    far = _profile(milp_switched=PowerLaw(coef=1e9, power=0.0), cpu_full_rate=1.0)
    plan = make_plan(problem, budget_ms=200, profile=far, gpu=GpuState(False))
    assert plan.method == "cpu-ga" and plan.ga_share == 0.5 and plan.order == "ga-first"
    # Too little time left for HiGHS to get going: the GA's answer stands unproven.
    slow_start = dataclasses.replace(reach, milp_flat=PowerLaw(coef=1e4, power=0.0))
    solution = solve(problem, budget_ms=200, profile=slow_start, allow_gpu=False)
    assert solution.algorithm == "ga" and "milp_after_ga" not in solution.stats
    skipped = solution.plan["proof_after_ga"]
    assert not skipped["attempted"] and "floor" in skipped["reason"]


def test_highs_runs_first_only_where_the_profile_says_it_proves_quickly():
    """HiGHS first when its prediction fits in 1 - GA_SHARE of the budget; a prediction between
    that and the whole budget runs the GA first (HiGHS gets the time it leaves)."""
    cart = random_cart(8, 8, n_merchants=6, offers=(2, 4))
    best, _ = reference_brute_force(cart)
    problem = CartProblem.from_dict(cart)
    quick = _profile(
        milp_switched=PowerLaw(coef=20.0, power=0.0),
        milp_flat=PowerLaw(coef=20.0, power=0.0),
        cpu_full_rate=1.0,
    )
    plan = make_plan(problem, budget_ms=300, profile=quick, gpu=GpuState(False))
    assert plan.method == "milp" and plan.order == "highs-first"
    solve(problem, algorithm="milp")  # HiGHS's first run out of the way
    solution = solve(problem, budget_ms=300, profile=quick, allow_gpu=False)
    assert solution.optimal and solution.total == best
    assert [p["phase"] for p in solution.plan["ran"]] == ["milp"]
    assert solution.plan["order"] == "highs-first"
    slower = _profile(
        milp_switched=PowerLaw(coef=200.0, power=0.0),
        milp_flat=PowerLaw(coef=200.0, power=0.0),
        cpu_full_rate=1.0,
    )
    plan = make_plan(problem, budget_ms=300, profile=slower, gpu=GpuState(False))
    assert plan.method == "cpu-ga" and plan.order == "ga-first"


def _cut_at_the_deadline(monkeypatch) -> None:
    """Every HiGHS run is cut by its deadline before HiGHS answers (the runner's cut outcome,
    returned at once: the time it would have taken is left to the phases after it)."""
    import gpu_engine.solvers.milp.runner as runner

    def cut(problem, *, time_limit_ms=None, **kwargs):
        ms = time_limit_ms or 0.0
        return runner.MilpOutcome(None, -math.inf, runner.CUT_STATUS, 0.0, ms, 0, 0, cut=True)

    monkeypatch.setattr(runner, "milp_run", cut)


def test_highs_first_cut_hands_the_rest_to_the_ga(monkeypatch):
    """HiGHS cut at its deadline with nothing: the GA answers on the rest, HiGHS runs again
    (cut again) and GA restarts take what is left; the plan lists the phases in order."""
    _cut_at_the_deadline(monkeypatch)
    quick = _profile(milp_switched=PowerLaw(1.0, 0.0), milp_flat=PowerLaw(1.0, 0.0))
    solution = solve(BIG, budget_ms=300, allow_gpu=False, profile=quick)
    assert solution.plan["method"] == "milp" and solution.algorithm == "ga"
    ran = solution.plan["ran"]
    assert [p["phase"] for p in ran] == ["milp", "cpu-ga", "milp", "cpu-ga-restarts"]
    # HiGHS again is cut too, unless the GA left it less than its floor.
    assert ran[0]["cut"] and not ran[0]["failed"] and ran[2].get("cut", "skipped" in ran[2])
    assert solution.total <= ran[1]["total"] and not solution.optimal


def test_a_proof_cut_by_the_deadline_keeps_the_ga_answer_unproven(monkeypatch):
    """The deadline passes at once in whatever phase the proof is (build or HiGHS): the GA's
    answer stands, never claimed optimal, and the plan records the cut. The GA takes exactly
    its budget on the planner's clock (a loaded machine must not leave the proof no time)."""
    import gpu_engine.solvers.ga.solve as ga_module
    import gpu_engine.solvers.milp.runner
    from gpu_engine.warmup import ensure_cpu_warm

    ensure_cpu_warm()
    _cut_at_the_deadline(monkeypatch)
    clock = _FakeClock()
    monkeypatch.setattr(clock_module, "time", clock)
    real_ga = ga_module.solve_ga

    def ga_on_the_clock(problem, *, budget_ms, **kwargs):
        clock.now += budget_ms / 1e3
        return real_ga(problem, budget_ms=budget_ms, **kwargs)

    monkeypatch.setattr(ga_module, "solve_ga", ga_on_the_clock)
    reach = _profile(milp_switched=PowerLaw(coef=500.0, power=0.0), milp_flat=PowerLaw(1.0, 0.0))
    solution = solve(BIG, budget_ms=300, allow_gpu=False, profile=reach)
    assert solution.plan["method"] == "cpu-ga" and solution.algorithm == "ga"
    proof = solution.plan["proof_after_ga"]
    assert proof["attempted"] and proof["cut"]
    assert proof["highs_status"] == gpu_engine.solvers.milp.runner.CUT_STATUS
    assert not solution.optimal and not proof["optimal"]
    # GA restarts may improve on it with the time the cut proof left.
    assert solution.total <= proof["total"]
    assert solution.stats["milp_after_ga"] is proof


def test_a_solver_bug_is_never_hidden_by_the_fallback(monkeypatch):
    def mispriced(method, *args, **kwargs):
        raise SolverInconsistency(f"{method}: solver total 1 != priced total 2")

    monkeypatch.setattr(executor, "_run", mispriced)
    problem = CartProblem.from_dict(random_cart(2, 6, n_merchants=6, offers=(1, 4)))
    with pytest.raises(SolverInconsistency):
        solve(problem, budget_ms=200)
    assert not issubclass(SolverInconsistency, (RuntimeError, ValueError, MemoryError))


class _FakeClock:
    """``time`` for the planner: reading it costs nothing, a solver advances it by the budget it
    was handed (each one using all of it, the worst case)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def perf_counter(self) -> float:
        return self.now


def test_the_budget_holds_end_to_end(monkeypatch):
    """The planner hands out no more than its budget in all, the GA's share plus the MILP's
    proof, measured on an injected clock (the 10% bound on real time is the device benchmark's:
    BENCHMARKS.md)."""
    import gpu_engine.solvers.ga.solve
    import gpu_engine.solvers.milp.runner
    from gpu_engine.warmup import ensure_cpu_warm

    # The planner warms the process before its clock starts; warm it now, before the solvers
    # below are replaced by ones that only spend the fake clock.
    ensure_cpu_warm()
    clock = _FakeClock()
    monkeypatch.setattr(clock_module, "time", clock)
    handed: list[tuple[str, float]] = []

    def spend(name, solver):
        def run(problem, *, budget_ms, **kwargs):
            solution = solver(problem, budget_ms=budget_ms, **kwargs)
            handed.append((name, budget_ms))
            clock.now += budget_ms / 1e3
            return solution

        return run

    monkeypatch.setattr(
        gpu_engine.solvers.ga.solve, "solve_ga", spend("ga", gpu_engine.solvers.ga.solve.solve_ga)
    )
    monkeypatch.setattr(
        gpu_engine.solvers.milp.runner,
        "solve_milp",
        spend("milp", gpu_engine.solvers.milp.runner.solve_milp),
    )
    # Nothing exact fits, the MILP is within reach: the GA gets half, the proof the rest.
    reach = _profile(milp_switched=PowerLaw(coef=500.0, power=0.0), milp_flat=PowerLaw(1.0, 0.0))
    solution = solve(BIG, budget_ms=300, allow_gpu=False, profile=reach)
    assert solution.plan["method"] == "cpu-ga" and solution.plan["ga_share"] == 0.5
    assert [name for name, _ in handed] == ["ga", "milp"]
    assert handed[0][1] == pytest.approx(150.0)
    assert sum(ms for _, ms in handed) == pytest.approx(300.0)
    assert solution.elapsed_ms == pytest.approx(300.0)
    # HiGHS first: half the budget (less planning), then the GA on the rest.
    handed.clear()
    quick = _profile(milp_switched=PowerLaw(50.0, 0.0), milp_flat=PowerLaw(1.0, 0.0))
    _cut_at_the_deadline(monkeypatch)
    monkeypatch.setattr(
        gpu_engine.solvers.milp.runner,
        "milp_best",
        spend("milp", gpu_engine.solvers.milp.runner.milp_best),
    )
    solution = solve(BIG, budget_ms=300, allow_gpu=False, profile=quick)
    assert solution.plan["method"] == "milp"
    # Nothing is left after the two: HiGHS again and the GA restarts say why they did not run.
    ran = solution.plan["ran"]
    assert [p["phase"] for p in ran] == ["milp", "cpu-ga", "milp", "cpu-ga-restarts"]
    assert "skipped" in ran[2] and "skipped" in ran[3]
    assert [name for name, _ in handed] == ["milp", "ga"]
    assert [ms for _, ms in handed] == pytest.approx([150.0, 150.0])
    assert solution.elapsed_ms == pytest.approx(300.0)


def test_the_seed_cart_goes_to_the_subset_dp_and_the_plan_is_reported():
    # 7e13 assignments: the full searches are predicted far slower than the subset DP.
    problem = CartProblem.from_dict(seed_cart())
    solution = solve(problem, allow_gpu=False)
    assert solution.plan["method"] == "cpu-dp" and solution.algorithm == "dp"
    predicted = solution.plan["predicted_ms"]
    assert predicted["cpu-dp"] < predicted["cpu-full"]
    assert solution.optimal


def test_after_the_ga_highs_gets_all_the_time_left_and_the_features_are_computed_once(
    monkeypatch,
):
    """No LP solve splits the time HiGHS's MILP gets after the GA (its root bound is at least
    the LP's), HiGHS proves without its presolve, the plan says so, and the cart's features are
    computed once, before the budget's clock (the proof and the GA's device reuse them)."""
    import gpu_engine.solvers.milp.runner as runner

    features_calls, milp_calls = [], []
    real_features, real_solve_milp = executor.cart_features, runner.solve_milp

    def counted_features(problem):
        features_calls.append(problem)
        return real_features(problem)

    def recorded_solve_milp(problem, **kwargs):
        milp_calls.append(kwargs)
        return real_solve_milp(problem, **kwargs)

    monkeypatch.setattr(executor, "cart_features", counted_features)
    monkeypatch.setattr(plan_module, "cart_features", counted_features)
    monkeypatch.setattr(runner, "solve_milp", recorded_solve_milp)
    # The proof's own phases: the neighbourhood step (which takes time before it) off.
    monkeypatch.setattr(tuning, "LNS_MIN_LINES", 10**6)
    reach = _profile(milp_switched=PowerLaw(coef=500.0, power=0.0), milp_flat=PowerLaw(1.0, 0.0))
    solution = solve(BIG, budget_ms=300, allow_gpu=False, profile=reach)
    assert solution.plan["order"] == "ga-first" and len(features_calls) == 1
    ran = solution.plan["ran"]
    # Unproven at HiGHS's own limit, GA restarts take the rest.
    assert [p["phase"] for p in ran][4:] in ([], ["cpu-ga-restarts"])
    assert [p["phase"] for p in ran][:4] == ["cpu-ga", "lns", "lp-bound", "milp"]
    assert "lines or more" in ran[1]["skipped"]
    assert "all the time left" in ran[2]["skipped"]
    assert len(milp_calls) == 1 and milp_calls[0]["presolve"] is False
    proof = solution.plan["proof_after_ga"]
    assert proof["attempted"] and "ms" not in ran[2]


def test_below_highs_floor_the_lp_bound_gets_what_is_left(monkeypatch):
    # The neighbourhood step solves the LP itself (the LP bound is then skipped): off here.
    monkeypatch.setattr(tuning, "LNS_MIN_LINES", 10**6)
    monkeypatch.setattr(tuning, "MIN_PROOF_MS", 1e9)
    monkeypatch.setattr(tuning, "GA_FLOOR_FACTOR", 0.0)
    reach = _profile(milp_switched=PowerLaw(coef=500.0, power=0.0), milp_flat=PowerLaw(1.0, 0.0))
    solution = solve(BIG, budget_ms=300, allow_gpu=False, profile=reach)
    ran = [p for p in solution.plan["ran"] if p["phase"] not in ("lns", "cpu-ga-restarts")]
    assert [p["phase"] for p in ran] == ["cpu-ga", "lp-bound", "milp"]
    assert "ms" in ran[1] and "floor" in ran[2]["skipped"]
    assert not solution.plan["proof_after_ga"]["attempted"]
    if ran[1]["bound"] is not None:
        assert solution.total >= ran[1]["bound"]
    # With the step on, its LP's bound stands in for the LP bound's.
    monkeypatch.setattr(tuning, "LNS_MIN_LINES", 30)
    ran = solve(BIG, budget_ms=300, allow_gpu=False, profile=reach).plan["ran"]
    assert [p["phase"] for p in ran][:4] == ["cpu-ga", "lns", "lp-bound", "milp"]
    if ran[1].get("bound") is not None:
        assert "neighbourhood" in ran[2]["skipped"]
