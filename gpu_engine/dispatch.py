"""Which exact solver answers ``solve(..., algorithm="auto")``.

Kept to one small function so the planner (``gpu_engine/planner.py``, another engineer's) can
take the choice over without touching the solvers. The choice compares estimated times from
step counts and measured rates (BENCHMARKS_engine.md), within each solver's memory bound.
"""

from __future__ import annotations

from typing import Any

from gpu_engine import rates
from gpu_engine.device import gpu_available
from gpu_engine.problem import INT64_MAX, CartProblem

# Below this many assignments the CPU full search answers in well under a millisecond.
CPU_FULL_MAX_COMPLEXITY = 20_000
# Subset-DP steps per second (bench suite subset_dp on the lent H200: 3.0e8 steps in 721 ms on
# one CPU core, 12.6 ms on the GPU); the relaxed DP's steps are simpler, about as fast.
CPU_DP_STEPS_PER_S = 4.0e8
GPU_DP_STEPS_PER_S = 2.4e10


def choose_algorithm(
    problem: CartProblem, *, budget_ms: float | None = None
) -> tuple[str, dict[str, Any]]:
    """(solver name, plan): the exact solver with the lowest estimated time."""
    from gpu_engine.dp import (
        CPU_MEMORY_LIMIT,
        merchant_dp_inputs,
        relaxed_memory,
        relaxed_steps,
    )

    del budget_ms  # exact solvers only; budgets matter to the planner's heuristics
    if problem.complexity <= CPU_FULL_MAX_COMPLEXITY:
        return "cpu-full", {"reason": "tiny cart", "complexity": problem.complexity}
    gpu = gpu_available()
    inputs = merchant_dp_inputs(problem)
    dp_s = inputs.steps() / (GPU_DP_STEPS_PER_S if gpu else CPU_DP_STEPS_PER_S)
    if relaxed_memory(problem) <= CPU_MEMORY_LIMIT:
        dp_s = min(dp_s, relaxed_steps(problem) / CPU_DP_STEPS_PER_S)
    elif inputs.memory_bytes() > CPU_MEMORY_LIMIT and not gpu:
        dp_s = float("inf")
    full_rate = rates.gpu_full_rate() if gpu else rates.cpu_full_rate()
    full_s = problem.complexity / full_rate if problem.complexity <= INT64_MAX else float("inf")
    plan = {"estimated_dp_s": dp_s, "estimated_full_search_s": full_s, "gpu": gpu}
    if full_s < dp_s:
        return ("gpu-full" if gpu else "cpu-full"), {**plan, "reason": "full search is faster"}
    return "dp", {**plan, "reason": "subset DP is faster"}
