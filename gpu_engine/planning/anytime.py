"""The rest of the budget on the anytime routes: an answer unproven when its route's phases
end (HiGHS at its deadline or its own limit, HiGHS failing, the GA stalling) goes on until the
budget ends or it is proven (:func:`keep_going`):

* HiGHS once more where the route allows it (trusted on the cart, not failed, not already run
  after the GA), warm-started with the best answer, with the proof's settings, on all the time
  left;
* then the GA restarting from new seeds whenever it stalls.

Each only ever replaces the answer with a cheaper one, or proves it. A HiGHS run whose status is
neither a proof nor a limit (:func:`highs_failed`) is a route that failed: its assignment, priced
exactly like any other, may stand, but never its bound or its claim of optimality.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

import numpy as np

from gpu_engine.planning import tuning
from gpu_engine.planning.clock import Deadline
from gpu_engine.planning.records import (
    HighsError,
    HighsRun,
    Outcome,
    PhaseRecord,
    RestartsRun,
    Skipped,
)
from gpu_engine.problem import CapacityError, CartProblem
from gpu_engine.solution import Solution
from gpu_engine.solvers.milp.runner import highs_failed

logger = logging.getLogger(__name__)

# What a HiGHS run may raise where HiGHS fails (the executor's fallback catches the same).
HIGHS_ERRORS = (CapacityError, MemoryError, RuntimeError)
# What an answer's stats say about its route (``plan["proof_after_ga"]`` reads them): kept when
# a later phase's answer replaces it.
ROUTE_STATS = ("proof_after_ga", "milp_after_ga")


def choice_of(problem: CartProblem, solution: Solution) -> np.ndarray:
    """A solution's assignment as a column index per line (a warm start for HiGHS): the
    merchant's index on a simple cart, its node's column on a version 2 one."""
    if not problem.simple:
        column = problem.fulfillment.column_of()
        pairs = [(solution.assignment[item], solution.nodes[item]) for item in problem.item_ids]
        return np.array([column[pair] for pair in pairs], dtype=np.int64)
    index = {merchant: m for m, merchant in enumerate(problem.merchant_ids)}
    return np.array([index[solution.assignment[item]] for item in problem.item_ids])


def distrust(problem: CartProblem, solution: Solution) -> Solution:
    """A failed HiGHS run's answer: its assignment stands (priced exactly), its bound does not.
    Proven only where the GA's price-only bound proves it."""
    from gpu_engine.solvers.ga.solve import lower_bound

    bound = lower_bound(problem)
    optimal = solution.total <= bound
    total = solution.total
    gap = None if optimal or total == 0 else (total - bound) / total
    stats = {**solution.stats, "bound": float(bound), "highs_bound": None}
    return replace(solution, stats=stats, optimal=optimal, gap=gap)


def trusted_bound(solution: Solution) -> int | None:
    """The best proven lower bound in cents that a phase's answer carries: the GA's own, the
    LP's, a proof's that did not fail (``proof_bound``), HiGHS's where its run did not fail."""
    from gpu_engine.solvers.milp.runner import cents_bound

    stats = solution.stats
    bounds = [stats.get("lower_bound"), stats.get("proof_bound")]
    if stats.get("lp_bound") is not None:
        bounds.append(cents_bound(stats["lp_bound"]))
    status = stats.get("highs_status")
    if status is not None and not highs_failed(status) and stats.get("bound") is not None:
        bounds.append(cents_bound(stats["bound"]))
    return best_bound(*bounds)


def best_bound(*bounds: int | None) -> int | None:
    known = [int(b) for b in bounds if b is not None]
    return max(known) if known else None


def with_bound(solution: Solution, bound: int | None) -> Solution:
    """``solution`` proven where it meets ``bound``, its gap tightened otherwise (a new
    Solution where either changes)."""
    if bound is None or solution.optimal:
        return solution
    if solution.total <= bound:
        return replace(solution, optimal=True, gap=None)
    if solution.total > 0:
        gap = (solution.total - bound) / solution.total
        return replace(solution, gap=gap if solution.gap is None else min(solution.gap, gap))
    return solution


def highs_proof(
    problem: CartProblem, best: Solution, left_ms: float
) -> tuple[Solution | None, HighsRun | HighsError]:
    """HiGHS with the proof's settings (``PROOF_PRESOLVE``, ``PROOF_HEURISTICS``), warm-started
    with ``best``, on ``left_ms``: its answer (distrusted where HiGHS failed; None where it
    raised) and its record."""
    from gpu_engine.solvers.milp.runner import PROOF_HEURISTICS, PROOF_PRESOLVE, solve_milp

    budget = round(left_ms, 3)
    try:
        milp = solve_milp(
            problem,
            budget_ms=left_ms,
            warm_start=choice_of(problem, best),
            presolve=PROOF_PRESOLVE,
            heuristics=PROOF_HEURISTICS,
        )
    except HIGHS_ERRORS as exc:
        error = f"{type(exc).__name__}: {exc}"
        logger.warning("HiGHS's proof failed: %s", error)
        return None, HighsError(budget, error)
    status = milp.stats["highs_status"]
    failed = highs_failed(status)
    if failed:
        milp = distrust(problem, milp)
    cut = milp.stats["cut"]
    record = HighsRun(Outcome.of(milp), budget, status, cut, failed, warm_start=best.total)
    return milp, record


@dataclass(frozen=True)
class Rest:
    """What the rest of a budget needs: the cart, the route's deadline, seed and GA device,
    whether HiGHS runs once more, HiGHS's floor (``Plan.proof_floor_ms``) and the best proven
    bound so far."""

    problem: CartProblem
    deadline: Deadline
    seed: int
    device: str
    highs: bool
    proof_floor_ms: float
    bound: int | None = None


def keep_going(best: Solution, rest: Rest) -> tuple[Solution, tuple[PhaseRecord, ...]]:
    """The route's answer ``best``, improved or proven on the rest of the budget (see the module
    docstring), and the records of the phases that ran or were skipped."""
    records: list[PhaseRecord] = []
    bound = rest.bound
    best = with_bound(best, bound)
    if not best.optimal and rest.highs:
        best, bound = _highs_again(best, rest, bound, records)
    if not best.optimal:
        best, bound = _ga_restarts(best, rest, bound, records)
    return with_bound(best, bound), tuple(records)


def _highs_again(
    best: Solution, rest: Rest, bound: int | None, records: list[PhaseRecord]
) -> tuple[Solution, int | None]:
    """HiGHS warm-started with ``best`` on all the time left (its floor permitting)."""
    left = rest.deadline.left_ms()
    if left < rest.proof_floor_ms:
        records.append(Skipped("milp", f"{left:.0f} ms left < {rest.proof_floor_ms:.0f} ms floor"))
        return best, bound
    milp, record = highs_proof(rest.problem, best, left)
    records.append(record)
    if milp is None:
        return best, bound
    bound = best_bound(bound, trusted_bound(milp))
    better = milp.optimal or milp.total < best.total
    return (_replaced(best, milp) if better else best), bound


def _ga_restarts(
    best: Solution, rest: Rest, bound: int | None, records: list[PhaseRecord]
) -> tuple[Solution, int | None]:
    """The GA from the next seed, restarting whenever it stalls, on all the time left."""
    from gpu_engine.solvers.ga.solve import restart_seed, solve_ga

    left = rest.deadline.left_ms()
    if left < tuning.MIN_REST_MS:
        records.append(Skipped(f"{rest.device}-ga-restarts", f"{left:.0f} ms left"))
        return best, bound
    seed = restart_seed(rest.seed, 1)
    ga = solve_ga(
        rest.problem, budget_ms=left, seed=seed, device=rest.device, bound=bound, restarts=True
    )
    restarts = len(ga.stats["restarts"])
    stop = ga.stats["stop"]
    records.append(RestartsRun(rest.device, Outcome.of(ga), left, seed, restarts, stop, bound))
    bound = best_bound(bound, ga.stats["lower_bound"])
    return (_replaced(best, ga) if ga.total < best.total else best), bound


def _replaced(old: Solution, new: Solution) -> Solution:
    """``new`` as the answer, with what ``old``'s stats said about the route."""
    kept = {k: old.stats[k] for k in ROUTE_STATS if k in old.stats and k not in new.stats}
    return replace(new, stats={**new.stats, **kept}) if kept else new
