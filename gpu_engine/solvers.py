"""The registry of exact solvers and the ``solve`` entry point."""

from __future__ import annotations

import functools
from collections.abc import Callable

from gpu_engine.cpu_full import solve_cpu_full
from gpu_engine.dp import solve_dp
from gpu_engine.problem import CartProblem, ProblemError
from gpu_engine.solution import Solution


def solve_gpu_full(problem: CartProblem, **kwargs) -> Solution:
    # Imported on use: the CUDA modules stay out of `import gpu_engine`.
    from gpu_engine.gpu_full import solve_gpu_full as run

    return run(problem, **kwargs)


SOLVERS: dict[str, Callable[..., Solution]] = {
    "cpu-full": solve_cpu_full,
    "dp": solve_dp,
    "cpu-dp": functools.partial(solve_dp, device="cpu"),
    "gpu-full": solve_gpu_full,
    "gpu-dp": functools.partial(solve_dp, device="gpu"),
}


def solve(
    problem: CartProblem,
    *,
    algorithm: str = "auto",
    budget_ms: float | None = None,
    seed: int = 0,
) -> Solution:
    """Cheapest assignment for ``problem``. ``algorithm="auto"`` lets the dispatcher choose;
    ``budget_ms`` time-boxes solvers that can stop early (their answer is then flagged not
    optimal); ``seed`` is for randomised solvers (the exact ones ignore it)."""
    del seed
    from gpu_engine.dispatch import choose_algorithm

    plan = None
    name = algorithm
    if algorithm == "auto":
        name, plan = choose_algorithm(problem, budget_ms=budget_ms)
    if name not in SOLVERS:
        raise ProblemError("algorithm", algorithm, f"must be one of auto, {', '.join(SOLVERS)}")
    solution = SOLVERS[name](problem, budget_ms=budget_ms)
    if plan is not None:
        solution.plan = {"algorithm": name, **plan}
    return solution
