"""CUDA min-with-index reductions over :func:`gpu_engine.cuda_ops.order.takes`, written once.

Every kernel that reduces (full search, GA, cheapest offer) calls these. Two paths, chosen when
a kernel is compiled (a Python-level choice, never a runtime branch):

* shared memory (:func:`group_min_in`, :func:`make_group_min_shared`): a tree over a shared
  array. The only path Numba's CUDA simulator can run (it has no warp shuffles);
* warp shuffles (:func:`group_min_shuffle`, :func:`block_min_shuffle`): no shared traffic
  inside a warp; real devices only.

Thread-to-data mapping: thread ``t`` brings one candidate; a *group* is ``group`` consecutive
threads (a power of two, aligned to its size), reduced together. Every thread of the block must
call a shared-memory reduction (they synchronise the block).
"""

from __future__ import annotations

import numba
from numba import cuda

from gpu_engine.cuda_ops.order import takes

FULL_MASK = 0xFFFFFFFF
WARP = 32


@cuda.jit(device=True)
def group_min_in(value, index, group, values, indexes):
    """Shared-memory tree over ``group`` consecutive threads, in the caller's shared arrays
    ``values``/``indexes`` (one slot per thread of the block). Every thread gets its group's
    (value, index); the arrays are free again when it returns."""
    t = cuda.threadIdx.x
    sub = t % group
    values[t] = value
    indexes[t] = index
    cuda.syncthreads()
    offset = group // 2
    while offset > 0:
        if sub < offset and takes(values[t], indexes[t], values[t + offset], indexes[t + offset]):
            values[t] = values[t + offset]
            indexes[t] = indexes[t + offset]
        cuda.syncthreads()
        offset //= 2
    value = values[t - sub]
    index = indexes[t - sub]
    # A following reduction's writes must not overtake these reads.
    cuda.syncthreads()
    return value, index


def make_group_min_shared(threads_per_block: int):
    """:func:`group_min_in` with its own shared arrays of ``threads_per_block`` int64 slots:
    ``group_min_shared(value, index, group) -> (value, index)`` for every thread."""

    @cuda.jit(device=True)
    def group_min_shared(value, index, group):
        values = cuda.shared.array(threads_per_block, numba.int64)
        indexes = cuda.shared.array(threads_per_block, numba.int64)
        return group_min_in(value, index, group, values, indexes)

    return group_min_shared


@cuda.jit(device=True)
def group_min_shuffle(value, index, group):
    """Warp-shuffle tree over ``group`` (<= 32) consecutive lanes; the result is valid in the
    group's first lane. Every lane of the warp must call it (full mask)."""
    offset = group // 2
    while offset > 0:
        other_value = cuda.shfl_down_sync(FULL_MASK, value, offset)
        other_index = cuda.shfl_down_sync(FULL_MASK, index, offset)
        if takes(value, index, other_value, other_index):
            value = other_value
            index = other_index
        offset //= 2
    return value, index


@cuda.jit(device=True)
def block_min_shuffle(value, index, warp_values, warp_indexes):
    """Whole-block minimum: shuffles inside each warp, the warps' winners through the caller's
    shared arrays (one slot per warp), then shuffles in warp 0. The result is valid in thread 0
    only. ``blockDim.x`` must be a multiple of 32."""
    t = cuda.threadIdx.x
    lane = t % WARP
    warp = t // WARP
    value, index = group_min_shuffle(value, index, WARP)
    if lane == 0:
        warp_values[warp] = value
        warp_indexes[warp] = index
    cuda.syncthreads()
    if warp == 0:
        value = warp_values[0]
        index = -1
        if lane < cuda.blockDim.x // WARP:
            value = warp_values[lane]
            index = warp_indexes[lane]
        value, index = group_min_shuffle(value, index, WARP)
    return value, index
