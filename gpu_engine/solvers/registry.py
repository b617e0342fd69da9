"""The registry of solvers by name (the exact ones and the GA, which is flagged approximate
unless it meets a proven bound) and the ``solve`` entry point."""

from __future__ import annotations

import functools
from collections.abc import Callable

from gpu_engine.problem import CartProblem, ProblemError
from gpu_engine.solution import Solution
from gpu_engine.solvers.dp.solve import solve_dp
from gpu_engine.solvers.full.cpu import solve_cpu_full
from gpu_engine.solvers.ga.solve import solve_ga_cpu, solve_ga_gpu
from gpu_engine.solvers.milp.runner import solve_milp


def solve_gpu_full(problem: CartProblem, **kwargs) -> Solution:
    # Imported on use: the CUDA modules stay out of `import gpu_engine`.
    from gpu_engine.solvers.full.cuda import solve_gpu_full as run

    return run(problem, **kwargs)


SOLVERS: dict[str, Callable[..., Solution]] = {
    "cpu-full": solve_cpu_full,
    "dp": solve_dp,
    "cpu-dp": functools.partial(solve_dp, device="cpu"),
    "gpu-full": solve_gpu_full,
    "gpu-dp": functools.partial(solve_dp, device="gpu"),
    "milp": solve_milp,
    "cpu-ga": solve_ga_cpu,
    "gpu-ga": solve_ga_gpu,
}
# Randomised solvers take the seed.
SEEDED = frozenset({"cpu-ga", "gpu-ga"})


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
