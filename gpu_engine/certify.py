"""Every claimed optimum is checked in integers where that is cheap.

HiGHS and the LP relaxation prove in floating point: a dual bound computed with tolerances can
sit above the true optimum (it did, on carts of ~1e7-1e8 cents). Before an answer leaves
:func:`gpu_engine.solve` claiming ``optimal``, :func:`certify` sorts its proof:

* ``exact``: an integer method proved it (full search, the subset DPs, the flat carts' dual
  ascent and branch and bound, or the cart's integer lower bound meets the total), or an exact
  method re-ran the cart in the time the budget left (never more than the solve itself took,
  at least :data:`RECHECK_MIN_MS`) and agreed. Where the exact method found a cheaper total,
  its answer replaces the claimed one;
* ``highs``: no exact re-check fits; the proof rests on HiGHS's dual bound, which the engine
  trusts only within ``HIGHS_MAX_MONEY`` (``gpu_engine.solvers.milp.model``: HiGHS does not run
  beyond it), the range the fuzz (``python -m gpu_engine fuzz``) found free of wrong proofs.

``solution.stats["proof"]`` records which, and what the re-check cost.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from gpu_engine.problem import CartProblem
from gpu_engine.solution import Solution

logger = logging.getLogger(__name__)

# Algorithms whose proof is integer arithmetic throughout.
INTEGRAL = frozenset({"cpu-full", "gpu-full", "dp", "cpu-dp", "gpu-dp", "flat"})
# The re-check may take as long as the solve took, and at least this long (ms).
RECHECK_MIN_MS = 20.0
# The exact methods a re-check may run (the CPU ones: a re-check never waits for a GPU).
_RECHECKS = ("cpu-dp", "cpu-full")


def certify(problem: CartProblem, solution: Solution, *, left_ms: float | None) -> Solution:
    """``solution`` with ``stats["proof"]`` set, or an exact method's cheaper answer. ``left_ms``:
    what the budget has left (None: no budget)."""
    if not solution.optimal:
        return solution
    if _integral(problem, solution):
        solution.stats["proof"] = {"kind": "exact", "by": solution.algorithm}
        return solution
    allowed = max(RECHECK_MIN_MS, solution.elapsed_ms)
    if left_ms is not None:
        allowed = min(allowed, left_ms)
    method = _recheck_method(problem, allowed)
    if method is None:
        solution.stats["proof"] = {
            "kind": "highs",
            "why": f"no exact method predicted within {allowed:.0f} ms",
        }
        return solution
    return _rechecked(problem, solution, method)


def _integral(problem: CartProblem, solution: Solution) -> bool:
    if not problem.simple:
        # Version 2: exhaustion, the merchant DP (every placement of a merchant's lines over
        # its nodes, then an integer DP) and the flat solver (integer dual ascent and branch and
        # bound over nodes) are integer arithmetic throughout.
        return solution.algorithm in ("cpu-full", "gpu-full", "dp", "cpu-dp", "gpu-dp", "flat")
    if solution.algorithm in INTEGRAL:
        return True
    from gpu_engine.solvers.ga.solve import lower_bound

    return solution.total <= lower_bound(problem)


def _recheck_method(problem: CartProblem, allowed_ms: float) -> str | None:
    """The fastest exact CPU method predicted to finish within ``allowed_ms`` (None: none)."""
    if not problem.simple:
        from gpu_engine.planning.fulfilled import full_rate

        fits = problem.complexity / full_rate("cpu") * 1e3 <= allowed_ms
        return "cpu-full" if fits else None
    from gpu_engine.planning import GpuState, load_profile, make_plan

    plan = make_plan(
        problem, budget_ms=max(allowed_ms, 1.0), profile=load_profile(), gpu=GpuState(False)
    )
    predicted: dict[str, Any] = plan.to_dict()["predicted_ms"]
    fitting = [(predicted[m], m) for m in _RECHECKS if predicted.get(m) is not None]
    fitting = [(ms, m) for ms, m in fitting if ms <= allowed_ms]
    return min(fitting)[1] if fitting else None


def _rechecked(problem: CartProblem, solution: Solution, method: str) -> Solution:
    from gpu_engine.solvers.registry import SOLVERS

    started = time.perf_counter()
    exact = SOLVERS[method](problem)
    ms = (time.perf_counter() - started) * 1e3
    record = {"kind": "exact", "by": method, "recheck_ms": round(ms, 3)}
    if not exact.optimal:  # pragma: no cover - an exact method without a budget always proves
        solution.optimal = False
        solution.stats["proof"] = {"kind": "none", "why": f"{method} did not finish"}
        return solution
    if exact.total < solution.total:
        logger.error(
            "%s claimed %d optimal; %s proves %d: its answer replaces the claim",
            solution.algorithm,
            solution.total,
            method,
            exact.total,
        )
        record["replaced"] = {"algorithm": solution.algorithm, "total": solution.total}
        exact.plan = solution.plan
        exact.elapsed_ms = solution.elapsed_ms + ms
        exact.stats["proof"] = record
        return exact
    assert exact.total == solution.total, "an exact optimum is never above a feasible total"
    solution.stats["proof"] = record
    solution.elapsed_ms += ms
    return solution


def left_ms(budget_ms: float | None, started: float) -> float | None:
    """What a budget started at ``started`` (``time.perf_counter()``) has left, in ms."""
    if budget_ms is None:
        return None
    return max(0.0, budget_ms - (time.perf_counter() - started) * 1e3)
