"""TEMPORARY shim of the batch solver's interface (issue 14), so that the Django side can be
built and tested before the real ``gpu_engine.batch`` lands; it is dropped at merge.

Solves each cart with the existing exact per-cart solvers: full search for small carts, the
subset DP for mid-size ones; carts above ``MAX_DP_COMPLEXITY`` come back ``None`` (the caller
sends them through the normal planner), as the real batch solver does for its own limit.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from gpu_engine.cpu_full import solve_cpu_full
from gpu_engine.dp import solve_dp
from gpu_engine.problem import CartProblem
from gpu_engine.solution import Solution

MAX_FULL_COMPLEXITY = 4096
MAX_DP_COMPLEXITY = 10**12


@dataclass(frozen=True)
class BatchResult:
    solutions: list[Solution | None]
    device: str
    elapsed_ms: float


def _solve_one(problem: CartProblem) -> Solution | None:
    if problem.complexity <= MAX_FULL_COMPLEXITY:
        return solve_cpu_full(problem)
    if problem.complexity <= MAX_DP_COMPLEXITY:
        return solve_dp(problem, device="cpu")
    return None


def solve_batch(problems: Sequence[CartProblem], *, device: str = "auto") -> BatchResult:
    if device not in ("auto", "cpu", "gpu"):
        raise ValueError(f"device must be auto, cpu or gpu, got {device!r}")
    t0 = time.perf_counter()
    solutions = [_solve_one(problem) for problem in problems]
    return BatchResult(
        solutions=solutions, device="cpu", elapsed_ms=(time.perf_counter() - t0) * 1e3
    )
