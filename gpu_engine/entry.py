"""``gpu_engine.solve``: a named solver from the registry, or the planner's choice ("auto").

Apart from the registry so that the planner (which warms the registry's solvers before a
budget starts) is not imported by the module it imports."""

from __future__ import annotations

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
    (``gpu_engine.planning.planner.solve_planned``; ``planner_options``: ``gpu_busy``,
    ``gpu_queue_depth``, ``allow_gpu``, ``profile``); ``budget_ms`` time-boxes solvers that can
    stop early (their answer is then flagged not optimal); ``seed`` is for randomised solvers
    (the exact ones ignore it)."""
    if algorithm == "auto":
        from gpu_engine.planning.planner import solve_planned

        return solve_planned(problem, budget_ms=budget_ms, seed=seed, **planner_options)
    if algorithm not in SOLVERS:
        raise ProblemError("algorithm", algorithm, f"must be one of auto, {', '.join(SOLVERS)}")
    extra = {"seed": seed} if algorithm in SEEDED else {}
    return SOLVERS[algorithm](problem, budget_ms=budget_ms, **extra)
