"""The batch's host side for version 2 carts: pack, plan, search on the CPU twin or the GPU.

:func:`gpu_engine.batch.engine.solve_problems` sends the carts that are not simple here and
the simple ones down the unchanged version 1 path, then merges the answers in cart order.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numba
import numpy as np

from gpu_engine.batch.pack import MAX_WORK
from gpu_engine.batch.threads import PARALLEL_MIN_STEPS, threads_limited
from gpu_engine.batch.v2_pack import PackedV2, pack_v2, plan_v2
from gpu_engine.problem import CartProblem


@dataclass(frozen=True, eq=False)
class V2Answers:
    """Per cart ``method`` (FULL or TOO_LARGE), ``total`` (-1 when too large) and per line
    (``packed.line_ptr[c] + i`` is line ``i`` of cart ``c`` in its problem's order) its column
    in its problem (-1 when too large)."""

    packed: PackedV2
    method: np.ndarray
    total: np.ndarray
    choice: np.ndarray
    timings: dict[str, float]


def solve_v2(problems: Sequence[CartProblem], *, where: str, max_work: int = MAX_WORK) -> V2Answers:
    """Exact answers of ``problems`` by full search, on ``where`` ("cpu" or "gpu"); carts
    whose steps pass ``max_work`` are planned TOO_LARGE and left for the per-cart planner."""
    t0 = time.perf_counter()
    packed = pack_v2(problems)
    method, complexity, work = plan_v2(problems, packed, max_work=max_work)
    t1 = time.perf_counter()
    if where == "gpu":
        from gpu_engine.batch.v2_cuda import solve_v2_gpu

        total, choice = solve_v2_gpu(packed, method, complexity)
    else:
        total, choice = _solve_cpu(packed, method, complexity, int(work.sum()))
    # Cart-local columns back to the problems' columns, packed lines to the problems' order.
    line_cart = np.repeat(np.arange(packed.n_carts), np.diff(packed.line_ptr))
    solved = choice >= 0
    choice[solved] = packed.col_index[packed.col_ptr[line_cart[solved]] + choice[solved]]
    in_order = np.empty_like(choice)
    in_order[packed.line_ptr[line_cart] + packed.line_index] = choice
    timings = {"pack_ms": (t1 - t0) * 1e3, "solve_ms": (time.perf_counter() - t1) * 1e3}
    return V2Answers(packed=packed, method=method, total=total, choice=in_order, timings=timings)


def _solve_cpu(
    packed: PackedV2, method: np.ndarray, complexity: np.ndarray, steps: int
) -> tuple[np.ndarray, np.ndarray]:
    from gpu_engine.batch.v2_cpu import solve_v2_range

    total = np.full(packed.n_carts, -1, dtype=np.int64)
    choice = np.full(packed.line_qty.size, -1, dtype=np.int64)
    # All of numba's threads on work worth waking the pool for, else the calling one.
    with threads_limited(numba.get_num_threads() if steps >= PARALLEL_MIN_STEPS else 1):
        solve_v2_range(method, complexity, *packed.arrays, total, choice)
    return total, choice
