"""The rest of the budget on the planner's anytime routes (issue 25).

A route's own phases can stop well before the budget does: HiGHS at its deadline or its own
time limit (which it sets a little short, :mod:`gpu_engine.solvers.milp.runner`), HiGHS failing
("Solve error", a wrong "Infeasible", a crashed solver process), the GA stalling. Unproven, the
answer then goes on here until the budget ends or it is proven (:func:`keep_going`):

* HiGHS once more where the route allows it (trusted on the cart, not failed, not already run
  after the GA), warm-started with the best answer, without its presolve and heuristics (the
  proof's settings, ``PROOF_PRESOLVE`` and ``PROOF_HEURISTICS``), on all the time left;
* then the GA with restarts (:func:`gpu_engine.solvers.ga.solve.solve_ga`, ``restarts``): a run
  that stalls starts again from the next seed, until the budget ends or the best meets a proven
  bound.

Each only ever replaces the answer with a cheaper one, or proves it. A HiGHS run whose status is
neither a proof nor a limit (:func:`highs_failed`) is a route that failed: its assignment, priced
exactly like any other, may stand, but never its bound or its claim of optimality.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpu_engine.problem import CapacityError, CartProblem
from gpu_engine.solution import Solution
from gpu_engine.solvers.milp.runner import highs_failed

logger = logging.getLogger(__name__)

# The GA's restarts run only on at least this much of the budget (ms).
MIN_REST_MS = 10.0
# What a HiGHS run may raise where HiGHS fails (the planner's fallback catches the same).
HIGHS_ERRORS = (CapacityError, MemoryError, RuntimeError)
# What an answer's stats say about its route (``plan["proof_after_ga"]`` reads them): kept when
# a later phase's answer replaces it.
ROUTE_STATS = ("proof_after_ga", "milp_after_ga")


def phase_record(name: str, solution: Solution | None, **extra: Any) -> dict[str, Any]:
    """One entry of ``plan["ran"]``: the phase, its time, total and proof, and ``extra``."""
    if solution is None:
        return {"phase": name, **extra}
    return {
        "phase": name,
        "ms": round(solution.elapsed_ms, 3),
        "total": solution.total,
        "optimal": solution.optimal,
        **extra,
    }


def choice_of(problem: CartProblem, solution: Solution) -> np.ndarray:
    """A solution's assignment as a merchant index per line (a warm start for HiGHS)."""
    index = {merchant: m for m, merchant in enumerate(problem.merchant_ids)}
    return np.array([index[solution.assignment[item]] for item in problem.item_ids])


def distrust(problem: CartProblem, solution: Solution) -> Solution:
    """A failed HiGHS run's answer: its assignment stands (priced exactly), its bound does not.
    Proven only where the GA's price-only bound proves it."""
    from gpu_engine.solvers.ga.solve import lower_bound

    bound = lower_bound(problem)
    solution.stats["bound"] = float(bound)
    solution.stats["highs_bound"] = None
    solution.optimal = solution.total <= bound
    total = solution.total
    solution.gap = None if solution.optimal or total == 0 else (total - bound) / total
    return solution


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


@dataclass
class Rest:
    """What the rest of a budget needs: the cart, the time left (ms, read when asked), the
    route's seed and GA device, its ``phases`` (``plan["ran"]``, appended to), whether HiGHS
    runs once more, HiGHS's floor (``Plan.proof_floor_ms``) and the best proven bound so far."""

    problem: CartProblem
    left_ms: Callable[[], float]
    seed: int
    device: str
    phases: list[dict[str, Any]]
    highs: bool
    proof_floor_ms: float
    bound: int | None = None


def keep_going(best: Solution, rest: Rest) -> Solution:
    """The route's answer ``best``, improved or proven on the rest of the budget (see the module
    docstring); ``stats["phases"]`` lists every phase."""
    best = with_bound(best, rest.bound)
    if not best.optimal and rest.highs:
        best = _highs_again(best, rest)
    if not best.optimal:
        best = _ga_restarts(best, rest)
    best.stats["phases"] = rest.phases
    return with_bound(best, rest.bound)


def with_bound(solution: Solution, bound: int | None) -> Solution:
    """``solution`` proven where it meets ``bound``, its gap tightened otherwise."""
    if bound is None or solution.optimal:
        return solution
    if solution.total <= bound:
        solution.optimal, solution.gap = True, None
    elif solution.total > 0:
        gap = (solution.total - bound) / solution.total
        solution.gap = gap if solution.gap is None else min(solution.gap, gap)
    return solution


def highs_proof(
    problem: CartProblem, best: Solution, left_ms: float
) -> tuple[Solution | None, dict[str, Any]]:
    """HiGHS with the proof's settings (``PROOF_PRESOLVE``, ``PROOF_HEURISTICS``), warm-started
    with ``best``, on ``left_ms``: its answer (distrusted where HiGHS failed; None where it
    raised) and its entry of ``plan["ran"]``."""
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
        return None, {"phase": "milp", "budget_ms": budget, "failed": True, "error": error}
    status = milp.stats["highs_status"]
    failed = highs_failed(status)
    if failed:
        distrust(problem, milp)
    record = phase_record(
        "milp",
        milp,
        budget_ms=budget,
        warm_start=best.total,
        status=status,
        cut=milp.stats["cut"],
        failed=failed,
    )
    return milp, record


def _highs_again(best: Solution, rest: Rest) -> Solution:
    """HiGHS warm-started with ``best`` on all the time left (its floor permitting)."""
    left = rest.left_ms()
    if left < rest.proof_floor_ms:
        skipped = f"{left:.0f} ms left < {rest.proof_floor_ms:.0f} ms floor"
        rest.phases.append({"phase": "milp", "skipped": skipped})
        return best
    milp, record = highs_proof(rest.problem, best, left)
    rest.phases.append(record)
    if milp is None:
        return best
    rest.bound = best_bound(rest.bound, trusted_bound(milp))
    return _replaced(best, milp) if milp.optimal or milp.total < best.total else best


def _ga_restarts(best: Solution, rest: Rest) -> Solution:
    """The GA from the next seed, restarting whenever it stalls, on all the time left."""
    from gpu_engine.solvers.ga.solve import restart_seed, solve_ga

    name = f"{rest.device}-ga-restarts"
    left = rest.left_ms()
    if left < MIN_REST_MS:
        rest.phases.append({"phase": name, "skipped": f"{left:.0f} ms left"})
        return best
    seed = restart_seed(rest.seed, 1)
    ga = solve_ga(
        rest.problem,
        budget_ms=left,
        seed=seed,
        device=rest.device,
        bound=rest.bound,
        restarts=True,
    )
    record = phase_record(
        name,
        ga,
        budget_ms=round(left, 3),
        seed=seed,
        restarts=len(ga.stats["restarts"]),
        stop=ga.stats["stop"],
        bound=rest.bound,
    )
    rest.phases.append(record)
    rest.bound = best_bound(rest.bound, ga.stats["lower_bound"])
    return _replaced(best, ga) if ga.total < best.total else best


def _replaced(old: Solution, new: Solution) -> Solution:
    """``new`` as the answer, with what ``old``'s stats said about the route."""
    for key in ROUTE_STATS:
        if key in old.stats:
            new.stats.setdefault(key, old.stats[key])
    return new
