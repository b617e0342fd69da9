"""The registry of solvers by name (the exact ones and the GA, which is flagged approximate
unless it meets a proven bound); :func:`gpu_engine.entry.solve` dispatches on it. The ``gpu-*``
entries refuse with :class:`gpu_engine.problem.DeviceUnavailable` where no CUDA target is."""

from __future__ import annotations

import functools
from collections.abc import Callable

from gpu_engine.device import require_gpu_for
from gpu_engine.problem import CartProblem
from gpu_engine.solution import Solution
from gpu_engine.solvers.dp.solve import solve_dp
from gpu_engine.solvers.flat.solve import solve_flat_solution
from gpu_engine.solvers.full.cpu import solve_cpu_full
from gpu_engine.solvers.ga.solve import solve_ga_cpu, solve_ga_gpu
from gpu_engine.solvers.milp.runner import solve_milp_seeded


def solve_gpu_full(problem: CartProblem, **kwargs) -> Solution:
    require_gpu_for("gpu-full")
    # Imported on use: the CUDA modules stay out of `import gpu_engine`.
    from gpu_engine.solvers.full.cuda import solve_gpu_full as run

    return run(problem, **kwargs)


def solve_gpu_dp(problem: CartProblem, **kwargs) -> Solution:
    require_gpu_for("gpu-dp")
    return solve_dp(problem, device="gpu", **kwargs)


def solve_gpu_ga(problem: CartProblem, **kwargs) -> Solution:
    require_gpu_for("gpu-ga")
    return solve_ga_gpu(problem, **kwargs)


SOLVERS: dict[str, Callable[..., Solution]] = {
    "cpu-full": solve_cpu_full,
    "dp": solve_dp,
    "cpu-dp": functools.partial(solve_dp, device="cpu"),
    "gpu-full": solve_gpu_full,
    "gpu-dp": solve_gpu_dp,
    "flat": solve_flat_solution,
    "milp": solve_milp_seeded,
    "cpu-ga": solve_ga_cpu,
    "gpu-ga": solve_gpu_ga,
}
# Randomised solvers take the seed.
SEEDED = frozenset({"cpu-ga", "gpu-ga"})
