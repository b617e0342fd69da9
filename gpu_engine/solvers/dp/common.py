"""What the subset DP's version 1 and version 2 paths share: their memory limit, slice size,
GPU threshold, and the answer's assembly."""

from __future__ import annotations

from typing import Any

import numpy as np

from gpu_engine.problem import CapacityError, CartProblem
from gpu_engine.results import make_solution
from gpu_engine.solution import Solution

# Host memory the CPU DPs may take (tables of 2^k entries).
CPU_MEMORY_LIMIT = 2 << 30
# Below this many steps the CPU answers faster than a GPU launch sequence.
GPU_MIN_STEPS = 4_000_000
# The DPs run in slices of about this many steps (~5-20 ms on a CPU core) with a deadline check
# between them.
SLICE_STEPS = 4_000_000


def check_memory(needed: int, limit: int) -> None:
    if needed > limit:
        raise CapacityError(
            "items", needed, f"subset DP needs {needed} bytes, more than its limit of {limit}"
        )


def finish(
    problem: CartProblem,
    choice: np.ndarray,
    total: int,
    optimal: bool,
    device: str,
    elapsed_ms: float,
    stats: dict[str, Any],
    gap: float | None = None,
) -> Solution:
    return make_solution(
        problem,
        choice,
        total=total,
        optimal=optimal,
        algorithm="dp",
        device=device,
        elapsed_ms=elapsed_ms,
        gap=gap,
        stats=stats,
    )
