"""The executor: plan a cart (:func:`~gpu_engine.planning.plan.make_plan`), run the plan's routes
(:mod:`gpu_engine.planning.routes`, then :mod:`gpu_engine.planning.anytime` on what is left)
and assemble the answer, its ``plan`` and its ``stats["phases"]``. A method that cannot run here
falls back to the CPU GA.

The GPU's state comes from the caller (the Celery side knows its queues): ``gpu_busy`` and
``gpu_queue_depth`` (values or callables) add a predicted wait to every GPU method;
``allow_gpu=False`` keeps the solve off the GPU (a CPU worker must not open a CUDA context in a
forked process)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from gpu_engine.planning import clock, routes, tuning
from gpu_engine.planning.anytime import Rest, best_bound, keep_going, trusted_bound
from gpu_engine.planning.clock import Deadline
from gpu_engine.planning.estimates import GpuState, cart_features
from gpu_engine.planning.plan import Plan, make_plan
from gpu_engine.planning.profile import RateProfile, load_profile
from gpu_engine.planning.records import Outcome, PhaseRecord, SolverRun, as_dicts
from gpu_engine.problem import CapacityError, CartProblem
from gpu_engine.solution import Solution

logger = logging.getLogger(__name__)

# What a method may raise where it cannot run here: the CPU GA answers instead. A solver bug
# (SolverInconsistency) is none of these and propagates.
_FALLBACK_ERRORS = (CapacityError, MemoryError, RuntimeError)


def solve_planned(
    problem: CartProblem,
    *,
    budget_ms: float | None = None,
    seed: int = 0,
    gpu_busy: bool | Callable[[], bool] = False,
    gpu_queue_depth: int | Callable[[], int] = 0,
    allow_gpu: bool = True,
    profile: RateProfile | None = None,
) -> Solution:
    """Plan, run the chosen method, and fall back (CPU GA last) if it cannot run here.

    The budget's clock starts after the solvers the plan can reach are warm (once per process,
    :func:`gpu_engine.warmup.warm_before_budget`: the GPU's kernels too where ``allow_gpu`` and
    a GPU is present): loading or compiling numba code is the process's cost, not the shopper's
    budget (``plan["warmup_ms"]`` says what the first request paid)."""
    from gpu_engine.device import gpu_available
    from gpu_engine.warmup import warm_before_budget

    warmup_ms = warm_before_budget("auto", allow_gpu=allow_gpu) * 1e3
    if not problem.simple:
        from gpu_engine.planning.fulfilled import solve_fulfilled

        idle = allow_gpu and gpu_available() and not _value(gpu_busy)
        idle = idle and int(_value(gpu_queue_depth)) == 0
        solution = solve_fulfilled(problem, budget_ms=budget_ms, seed=seed, gpu_idle=idle)
        return replace(solution, plan={**(solution.plan or {}), "warmup_ms": warmup_ms})
    # What depends on the cart alone is computed once, before the budget's clock, like the
    # warm-up; the GPU's state and everything timed are read after it starts.
    features = cart_features(problem)
    profile = profile or load_profile()
    started = clock.now()
    budget = tuning.DEFAULT_BUDGET_MS if budget_ms is None else float(budget_ms)
    deadline = Deadline(started, budget)
    gpu = GpuState(
        present=allow_gpu and gpu_available(),
        busy=bool(_value(gpu_busy)),
        queue_depth=int(_value(gpu_queue_depth)),
    )
    plan = make_plan(problem, budget_ms=budget, profile=profile, gpu=gpu, features=features)
    planning_ms = deadline.spent_ms()
    fallback = None
    try:
        solution = _run(plan.method, problem, plan, deadline=deadline, seed=seed)
    except _FALLBACK_ERRORS as exc:
        # A GPU that fails at run time, or memory the prediction did not foresee.
        fallback = f"{plan.method} failed ({type(exc).__name__}: {exc}); cpu-ga ran instead"
        logger.warning("planner fallback: %s", fallback, exc_info=True)
        solution, fallback = _fallback_ga(problem, plan, deadline=deadline, seed=seed, why=fallback)
    ran = solution.stats.get("phases") or [SolverRun(plan.method, Outcome.of(solution)).as_dict()]
    record = {
        **plan.to_dict(),
        "algorithm": solution.algorithm,
        "planning_ms": planning_ms,
        "warmup_ms": warmup_ms,
        "solver_ms": solution.elapsed_ms,
        "fallback": fallback,
        # The MILP after a GA: attempted or skipped, and whether the deadline cut it.
        "proof_after_ga": solution.stats.get("proof_after_ga"),
        # Every phase that ran, in order (time, total, proven, why it ran or stopped).
        "ran": ran,
    }
    return replace(solution, plan=record, elapsed_ms=deadline.spent_ms())


def _value(value: Any) -> Any:
    return value() if callable(value) else value


def _fallback_ga(
    problem: CartProblem, plan: Plan, *, deadline: Deadline, seed: int, why: str
) -> tuple[Solution, str]:
    """The CPU GA route after a failed method; where that fails too (its neighbourhood step or
    proof runs HiGHS, which may be what failed), the CPU GA alone on what is left."""
    try:
        return _run("cpu-ga", problem, plan, deadline=deadline, seed=seed), why
    except _FALLBACK_ERRORS as exc:
        why += f"; that failed too ({type(exc).__name__}: {exc}); the CPU GA alone ran"
        logger.warning("planner fallback: %s", why, exc_info=True)
        from gpu_engine.solvers.ga.solve import solve_ga

        left = deadline.remaining_ms()
        return solve_ga(problem, budget_ms=left, seed=seed, device="cpu", restarts=True), why


def _run(
    method: str, problem: CartProblem, plan: Plan, *, deadline: Deadline, seed: int
) -> Solution:
    """``method`` on ``problem``: an exact method alone, or an anytime route (``milp``: HiGHS
    first; ``cpu-ga``/``gpu-ga``: GA first) and then the rest of the budget."""
    if method == "cpu-full":
        from gpu_engine.solvers.full.cpu import solve_cpu_full

        return solve_cpu_full(problem, budget_ms=deadline.remaining_ms())
    if method == "gpu-full":
        from gpu_engine.solvers.full.cuda import solve_gpu_full

        return solve_gpu_full(problem, budget_ms=deadline.remaining_ms())
    if method in ("cpu-dp", "gpu-dp"):
        from gpu_engine.solvers.dp.solve import solve_dp

        return solve_dp(problem, device=method[:3])
    if method == "flat":
        from gpu_engine.solvers.flat.solve import solve_flat_solution

        return solve_flat_solution(problem, budget_ms=deadline.remaining_ms())
    if method == "milp":
        return _highs_first(problem, plan, deadline, seed)
    return _ga_first(problem, plan, method, deadline, seed)


def _ga_first(
    problem: CartProblem, plan: Plan, method: str, deadline: Deadline, seed: int
) -> Solution:
    """The GA; the neighbourhood step (beside a GPU GA, after a CPU GA); HiGHS's proof (or the
    LP bound below HiGHS's floor); then GA restarts on the rest (HiGHS has had its run)."""
    device = routes.ga_device(plan, method)
    split = plan.split
    ga_ms = split.ga_ms if device == "gpu" else split.cpu_ga_ms
    beside = routes.NeighbourhoodBeside(problem, plan) if device == "gpu" else None
    ga, ga_record = routes.ga_phase(problem, device, ga_ms, seed)
    # From here the GA's answer carries ``phases`` (filled in at the end): the key keeps its
    # place in the stats of the answers built from this one.
    ga = replace(ga, stats={**ga.stats, "phases": []})
    if beside is not None and beside.started:
        stepped, lns_record = beside.merge(ga, deadline)
    else:
        stepped, lns_record = routes.lns_after(problem, ga, plan, deadline)
    answer, proof_records = routes.prove(problem, stepped, plan, deadline)
    rest = Rest(problem, deadline, seed, device, False, plan.proof_floor_ms, trusted_bound(answer))
    final, rest_records = keep_going(answer, rest)
    return _with_phases(final, (ga_record, lns_record, *proof_records, *rest_records))


def _highs_first(problem: CartProblem, plan: Plan, deadline: Deadline, seed: int) -> Solution:
    """HiGHS, warm-started with the drop heuristic's answer, until the GA's time is all that is
    left of the budget. Unproven (its deadline, its own limit) or failed, the GA runs on the
    rest, bounded by HiGHS's bound where HiGHS did not fail, and then HiGHS once more (unless it
    failed) and GA restarts spend what is left."""
    highs = routes.highs_first_run(problem, deadline.remaining_ms() - plan.split.ga_ms)
    milp = highs.milp
    if milp is not None and milp.optimal:
        return _with_phases(milp, (highs.record,))
    device = routes.ga_device(plan, "auto")
    ga, ga_record = routes.ga_after_highs(
        problem, device, deadline.remaining_ms(), seed, highs.bound
    )
    best = ga if milp is None or ga.total <= milp.total else milp
    if milp is not None and best is ga:
        best = replace(ga, elapsed_ms=ga.elapsed_ms + milp.elapsed_ms)
    bound = best_bound(highs.bound, ga.stats["lower_bound"])
    rest = Rest(problem, deadline, seed, device, not highs.failed, plan.proof_floor_ms, bound)
    final, rest_records = keep_going(best, rest)
    return _with_phases(final, (highs.record, ga_record, *rest_records))


def _with_phases(solution: Solution, records: tuple[PhaseRecord, ...]) -> Solution:
    """The answer with ``stats["phases"]``: every phase that ran or was skipped, in order."""
    return replace(solution, stats={**solution.stats, "phases": as_dicts(records)})
