"""``gpu_engine.solve``: a named solver from the registry, or the planner's choice ("auto").

Apart from the registry so that the planner (which warms the registry's solvers before a
budget starts) is not imported by the module it imports."""

from __future__ import annotations

import time

from gpu_engine.budget import check_budget, check_seed
from gpu_engine.certify import certify, left_ms
from gpu_engine.problem import CartProblem, ProblemError
from gpu_engine.solution import Solution
from gpu_engine.solvers.registry import SEEDED, SOLVERS


def solve(
    problem: CartProblem,
    *,
    algorithm: str = "auto",
    budget_ms: float | None = None,
    seed: int = 0,
    **planner_options,
) -> Solution:
    """Cheapest assignment for ``problem``. ``algorithm="auto"`` lets the planner choose
    (``gpu_engine.planning.solve_planned``; ``planner_options``: ``gpu_busy``,
    ``gpu_queue_depth``, ``allow_gpu``, ``profile``); ``budget_ms`` time-boxes every solver
    (stopped early, the answer is flagged not optimal; far over, BudgetError up front). It must
    be finite, > 0 and at most ``gpu_engine.budget.MAX_BUDGET_MS`` (else ProblemError naming
    ``budget_ms``), and its clock starts after the solvers are warm (once per process).
    ``seed`` is for randomised solvers (the exact ones ignore it): an integer from 0 to
    ``gpu_engine.budget.MAX_SEED`` (else ProblemError naming ``seed``). A claimed optimum is
    checked in integers where that fits the budget (:mod:`gpu_engine.certify`)."""
    budget_ms = check_budget(budget_ms)
    seed = check_seed(seed)
    if algorithm != "auto" and algorithm not in SOLVERS:
        raise ProblemError("algorithm", algorithm, f"must be one of auto, {', '.join(SOLVERS)}")
    if budget_ms is not None and algorithm != "auto":  # the planner warms what it reaches
        from gpu_engine.warmup import warm_before_budget

        warm_before_budget(algorithm)
    started = time.perf_counter()
    solution = _run(problem, algorithm, budget_ms, seed, planner_options)
    # The planner's warm-up is not the budget's (``plan["warmup_ms"]``).
    warmup_ms = float((solution.plan or {}).get("warmup_ms") or 0.0)
    left = left_ms(budget_ms, started + warmup_ms / 1e3)
    return certify(problem, solution, left_ms=left)


def _run(
    problem: CartProblem, algorithm: str, budget_ms: float | None, seed: int, planner_options
) -> Solution:
    if algorithm == "auto":
        from gpu_engine.planning import solve_planned

        return solve_planned(problem, budget_ms=budget_ms, seed=seed, **planner_options)
    extra = {"seed": seed} if algorithm in SEEDED else {}
    return SOLVERS[algorithm](problem, budget_ms=budget_ms, **extra)
