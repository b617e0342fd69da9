"""The routes' phases: each takes what it needs and returns a new Solution (the Solution it is
handed is never changed) and the typed record of what it did (:mod:`gpu_engine.planning.records`).
The executor (:mod:`gpu_engine.planning.executor`) runs them in the plan's order."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from gpu_engine.planning import clock, tuning
from gpu_engine.planning.anytime import (
    HIGHS_ERRORS,
    choice_of,
    distrust,
    highs_proof,
    trusted_bound,
)
from gpu_engine.planning.clock import Deadline
from gpu_engine.planning.estimates import HIGHS_UNTRUSTED, gpu_ga_fits, highs_runs
from gpu_engine.planning.plan import Plan, lns_applies
from gpu_engine.planning.records import (
    GaRun,
    HighsError,
    HighsRun,
    LnsRun,
    LpRun,
    Outcome,
    PhaseRecord,
    Skipped,
)
from gpu_engine.problem import CartProblem
from gpu_engine.solution import Solution

logger = logging.getLogger(__name__)


def ga_device(plan: Plan, method: str) -> str:
    """Where the GA of ``method`` runs ("auto": on an idle GPU that fits the cart)."""
    if method == "gpu-ga":
        return "gpu"
    if method == "cpu-ga":
        return "cpu"
    gpu = plan.gpu
    idle_gpu = gpu.present and not gpu.busy and gpu.queue_depth == 0
    return "gpu" if idle_gpu and gpu_ga_fits(plan.features) else "cpu"


def ga_phase(
    problem: CartProblem, device: str, budget_ms: float, seed: int
) -> tuple[Solution, GaRun]:
    """GA first: the GA for its share of the budget itself (not of what planning left: its time
    is then a nondecreasing function of the budget, which the monotone answers rest on)."""
    from gpu_engine.solvers.ga.solve import solve_ga

    ga = solve_ga(problem, budget_ms=budget_ms, seed=seed, device=device)
    return ga, GaRun(device, Outcome.of(ga), budget_ms, ga.stats["stop"])


def ga_after_highs(
    problem: CartProblem, device: str, budget_ms: float, seed: int, bound: int | None
) -> tuple[Solution, GaRun]:
    """HiGHS first, unproven: the GA on the rest, bounded by HiGHS's bound where it did not fail."""
    from gpu_engine.solvers.ga.solve import solve_ga

    ga = solve_ga(problem, budget_ms=budget_ms, seed=seed, device=device, bound=bound)
    stop = ga.stats["stop"]
    return ga, GaRun(device, Outcome.of(ga), budget_ms, stop, after_highs=True, bound=bound)


@dataclass(frozen=True)
class HighsFirst:
    """HiGHS first's run: its answer (None: it raised or found none), its bound in cents (None
    where it failed), whether it failed, and its record."""

    milp: Solution | None
    bound: int | None
    failed: bool
    record: HighsRun | HighsError


def highs_first_run(problem: CartProblem, highs_ms: float) -> HighsFirst:
    """HiGHS, warm-started with the drop heuristic's answer, on ``highs_ms`` (both formulations
    side by side on windows of ``PORTFOLIO_MIN_MS`` or more). A failure (a status neither a
    proof nor a limit, or an error raised) leaves the answer's assignment but never its bound or
    proof."""
    from gpu_engine.solvers.ga.seeds import drop_seed
    from gpu_engine.solvers.milp.portfolio import portfolio_best
    from gpu_engine.solvers.milp.runner import cents_bound, highs_failed, milp_best

    budget = round(highs_ms, 3)
    try:
        best = portfolio_best if highs_ms >= tuning.PORTFOLIO_MIN_MS else milp_best
        milp, outcome = best(problem, budget_ms=max(1.0, highs_ms), warm_start=drop_seed(problem))
    except HIGHS_ERRORS as exc:
        error = f"{type(exc).__name__}: {exc}"
        logger.warning("HiGHS first failed: %s", error)
        return HighsFirst(None, None, True, HighsError(budget, error))
    failed = highs_failed(outcome.status)
    if failed and milp is not None:
        milp = distrust(problem, milp)
    answer = None if milp is None else Outcome.of(milp)
    record = HighsRun(answer, budget, outcome.status, outcome.cut, failed)
    return HighsFirst(milp, None if failed else cents_bound(outcome.bound), failed, record)


class NeighbourhoodBeside:
    """The large-neighbourhood step in a thread beside the GPU GA, from the cheapest offer of
    every line (the LP guides the step, and the GA's answer cannot be waited for). HiGHS
    releases the GIL while it runs; the GA's host loop only launches kernels. HiGHS's own time
    limit ends the thread within ``budget_ms`` of its start."""

    def __init__(self, problem: CartProblem, plan: Plan) -> None:
        self.problem, self.plan = problem, plan
        self.result: Any = None  # the step's LnsResult once it has finished
        self.budget_ms = plan.split.lns_ms
        self.started = lns_unfit(plan, self.budget_ms) is None
        self.started_at = clock.now()
        if self.started:
            self.thread = threading.Thread(target=self._run, name="lns-beside-gpu", daemon=True)
            self.thread.start()

    def _run(self) -> None:
        from gpu_engine.solvers.milp.neighbourhood import improve

        # Each line's eligible merchants come by ascending unit price.
        cheapest = self.problem.cand_merchant[:, 0].astype(np.int64)
        try:
            self.result = improve(self.problem, cheapest, budget_ms=self.budget_ms)
        except Exception:  # the GA's answer stands; never a traceback for the step's sake
            logger.exception("the neighbourhood step beside the GPU GA failed")

    def merge(self, ga: Solution, deadline: Deadline) -> tuple[Solution, LnsRun | Skipped]:
        """The GA's answer, or the step's where cheaper (or proven by the step's LP bound)."""
        if ga.optimal:
            return ga, Skipped("lns", "the GA proved it")
        # Until the step's own deadline (HiGHS winds down within a few ms of it), never past
        # the budget: a late step must not eat the proof's time.
        step_ends = self.started_at + (self.budget_ms + tuning.LNS_FINISH_MS) / 1e3
        budget_ends = deadline.started + deadline.budget_ms / 1e3
        self.thread.join(timeout=max(0.0, min(step_ends, budget_ends) - clock.now()))
        if self.result is None:
            return ga, Skipped("lns", "no answer within the budget")
        return with_lns(self.problem, ga, self.result, budget_ms=self.budget_ms, beside=True)


def lns_unfit(plan: Plan, ms: float) -> str | None:
    """Why the step does not run on this cart with ``ms`` (None: it runs)."""
    if not highs_runs(plan.features):
        return HIGHS_UNTRUSTED  # the step runs HiGHS
    if not lns_applies(plan.features):
        return (
            f"only on carts of {tuning.LNS_MIN_LINES} lines or more and at most "
            f"{tuning.LNS_MAX_PAIRS} pairs (smaller ones are the GA's ground, larger ones' build "
            "is too slow)"
        )
    if ms < tuning.LNS_MIN_MS:
        return f"{ms:.0f} ms left < {tuning.LNS_MIN_MS:.0f} ms"
    return None


def lns_after(
    problem: CartProblem, ga: Solution, plan: Plan, deadline: Deadline
) -> tuple[Solution, LnsRun | Skipped]:
    """The large-neighbourhood step from the CPU GA's answer on ``plan.split.cpu_lns_ms`` (less
    where the budget has less left)."""
    from gpu_engine.solvers.milp.neighbourhood import improve

    ms = min(plan.split.cpu_lns_ms, deadline.left_ms() - tuning.LNS_FINISH_MS)
    skip = "the GA proved it" if ga.optimal else lns_unfit(plan, ms)
    if skip is not None:
        return ga, Skipped("lns", skip)
    result = improve(problem, choice_of(problem, ga), budget_ms=ms)
    return with_lns(problem, ga, result, budget_ms=ms, beside=False)


def with_lns(
    problem: CartProblem, ga: Solution, result: Any, *, budget_ms: float, beside: bool
) -> tuple[Solution, LnsRun]:
    """The GA's answer with the neighbourhood step's ``result`` (an ``LnsResult``): the step's
    choice where cheaper (found by HiGHS: ``algorithm`` "milp"), proven where it meets the
    bound (the LP's, or the GA's own)."""
    from gpu_engine.results import make_solution
    from gpu_engine.solvers.milp.runner import milp_proves

    best_total = min(result.total, ga.total)
    bound = max(result.bound or 0.0, float(ga.stats.get("lower_bound") or 0))
    proven = milp_proves(best_total, bound)
    record = LnsRun(result.total, proven, budget_ms, beside, result.bound, result.steps)
    improved = result.total < ga.total
    choice = result.choice if improved else choice_of(problem, ga)
    gap = None if proven or best_total == 0 else max(0.0, (best_total - bound) / best_total)
    # Beside the GA the step's time overlaps the GA's: it adds none.
    spent = 0.0 if beside else record.ms
    answer = make_solution(
        problem,
        choice,
        total=best_total,
        optimal=proven,
        algorithm="milp" if improved else ga.algorithm,
        device="cpu" if improved else ga.device,
        elapsed_ms=ga.elapsed_ms + spent,
        gap=gap,
        stats={**ga.stats, "lns": {"ga_total": ga.total}, "lp_bound": result.bound},
    )
    return answer, record


def lp_after_ga(
    problem: CartProblem, ga: Solution, left_ms: float
) -> tuple[Solution, LpRun | Skipped]:
    """The LP relaxation's bound on the ``left_ms`` that HiGHS's MILP is not started with: a GA
    answer that meets it is proven, otherwise its gap tightens."""
    from gpu_engine.bounds.lp import lp_bound

    if ga.stats.get("lp_bound") is not None:
        return ga, Skipped("lp-bound", "the neighbourhood step solved the LP")
    if left_ms < tuning.MIN_LP_MS:
        return ga, Skipped("lp-bound", f"{left_ms:.0f} ms left: no time")
    lp = lp_bound(problem, time_limit_ms=left_ms)
    record = LpRun(lp.ms, lp.bound, lp.status)
    if lp.bound is None:
        return ga, record
    bounded = replace(ga, stats={**ga.stats, "lp_bound": lp.bound})
    if ga.total <= lp.bound:
        return replace(bounded, optimal=True, gap=None), record
    if ga.total > 0:
        gap = max(0.0, (ga.total - lp.bound) / ga.total)
        return replace(bounded, gap=gap if ga.gap is None else min(ga.gap, gap)), record
    return bounded, record


def prove(
    problem: CartProblem, ga: Solution, plan: Plan, deadline: Deadline
) -> tuple[Solution, tuple[PhaseRecord, ...]]:
    """What the GA left of the budget on proving its answer: HiGHS's MILP, warm-started with
    it, on all of that time (a proven optimum, or a better incumbent, replaces the GA's answer;
    otherwise the GA's answer stands with the tighter gap), or the LP bound where the time is
    below HiGHS's floor. Both run under a hard deadline (a proof still running at the end of the
    budget is cut: ``stats["proof_after_ga"]["cut"]``)."""
    left = deadline.left_ms()
    floor = plan.proof_floor_ms
    if not ga.optimal and not highs_runs(plan.features):
        stats = {**ga.stats, "proof_after_ga": {"attempted": False, "reason": HIGHS_UNTRUSTED}}
        return replace(ga, stats=stats), (Skipped("milp", HIGHS_UNTRUSTED),)
    if ga.optimal or left < floor:
        records: tuple[PhaseRecord, ...] = ()
        if ga.optimal:
            reason = "the neighbourhood step proved it" if "lns" in ga.stats else "the GA proved it"
        else:
            reason = f"{left:.0f} ms left < {floor:.0f} ms floor"
            ga, lp_record = lp_after_ga(problem, ga, left)
            records = (lp_record,)
            if ga.optimal:
                reason += "; the LP bound proved it"
        stats = {**ga.stats, "proof_after_ga": {"attempted": False, "reason": reason}}
        return replace(ga, stats=stats), (*records, Skipped("milp", reason))
    lp_skip = Skipped(
        "lp-bound", "HiGHS's MILP gets all the time left: its root bound is at least the LP's"
    )
    milp, record = highs_proof(problem, ga, left)
    if milp is None or isinstance(record, HighsError):
        error = record.error if isinstance(record, HighsError) else None
        stats = {**ga.stats, "proof_after_ga": {"attempted": True, "left_ms": left, "error": error}}
        return replace(ga, stats=stats), (lp_skip, record)
    summary = {
        "attempted": True,
        "left_ms": left,
        "total": milp.total,
        "optimal": milp.optimal,
        "gap": milp.gap,
        "elapsed_ms": milp.elapsed_ms,
        "build_ms": milp.stats["build_ms"],
        "highs_status": record.status,
        "cut": milp.stats["cut"],
        "failed": record.failed,
    }
    if milp.optimal or milp.total < ga.total:
        warm = {"total": ga.total, "elapsed_ms": ga.elapsed_ms}
        stats = {**milp.stats, "warm_start_ga": warm, "proof_after_ga": summary}
        better = replace(milp, stats=stats, elapsed_ms=milp.elapsed_ms + ga.elapsed_ms)
        return better, (lp_skip, record)
    stats = {
        **ga.stats,
        "milp_after_ga": summary,
        "proof_after_ga": summary,
        "proof_bound": trusted_bound(milp),
    }
    gap = milp.gap if milp.gap is not None and (ga.gap is None or milp.gap < ga.gap) else ga.gap
    return replace(ga, stats=stats, gap=gap), (lp_skip, record)
