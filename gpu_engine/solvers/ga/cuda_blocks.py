"""Block-level steps of the GA's CUDA kernels (:mod:`gpu_engine.solvers.ga.cuda`).

Every thread of a block calls each of these with the block's shared-memory arrays: thread ``t``
of ``T`` takes the strided ranges of :mod:`gpu_engine.solvers.ga.ops`, per-merchant sums are
shared-memory atomics and best moves and totals are block reductions. Each mirrors a step of
the CPU twin (:mod:`gpu_engine.solvers.ga.cpu`), named in its docstring.
"""

from __future__ import annotations

from numba import cuda

from gpu_engine.cuda_ops.reduce import group_min_in
from gpu_engine.solvers.ga import ops as ga_ops
from gpu_engine.solvers.ga.core import (
    D_KIND,
    D_LINE,
    D_PICK,
    MUT_ELITE_GROUP,
    MUT_EMPTY_MERCHANT,
    MUT_GROW_MERCHANT,
    MUT_MOVE_TO_USED,
    MUT_RANDOM_LINE,
    N_MUTATIONS,
    NO_MOVE,
)
from gpu_engine.solvers.ga.rng import rand_below

_merchant_costs = cuda.jit(device=True)(ga_ops.merchant_costs)
_removals = cuda.jit(device=True)(ga_ops.removals)
_scan_pairs = cuda.jit(device=True)(ga_ops.scan_pairs)
_close_lines = cuda.jit(device=True)(ga_ops.close_lines)
_grow_keys = cuda.jit(device=True)(ga_ops.grow_keys)
_grow_order = cuda.jit(device=True)(ga_ops.grow_order)
_grow_scan = cuda.jit(device=True)(ga_ops.grow_scan)
_grow_apply = cuda.jit(device=True)(ga_ops.grow_apply)
_copy_group = cuda.jit(device=True)(ga_ops.copy_group)
_move_line = cuda.jit(device=True)(ga_ops.move_line)
_used_target = cuda.jit(device=True)(ga_ops.used_target)


@cuda.jit(device=True)
def block_sum(value, red_v):
    """Sum of every thread's ``value``, returned to all threads."""
    tid = cuda.threadIdx.x
    red_v[tid] = value
    cuda.syncthreads()
    half = cuda.blockDim.x // 2
    while half > 0:
        if tid < half:
            red_v[tid] += red_v[tid + half]
        cuda.syncthreads()
        half //= 2
    total = red_v[0]
    cuda.syncthreads()
    return total


@cuda.jit(device=True)
def block_best(value, index, red_v, red_i):
    """Lowest (value, index) over the threads, returned to all; an index < 0 is no entry."""
    return group_min_in(value, index, cuda.blockDim.x, red_v, red_i)


@cuda.jit(device=True)
def copy_row(src, dst):
    tid = cuda.threadIdx.x
    for i in range(tid, dst.size, cuda.blockDim.x):
        dst[i] = src[i]


@cuda.jit(device=True)
def aggregate(child, qty, price, params, sub, units, mcost, red_v):
    """Per-merchant state of ``child`` from scratch; returns the total to every thread."""
    tid = cuda.threadIdx.x
    step = cuda.blockDim.x
    for m in range(tid, sub.size, step):
        sub[m] = 0
        units[m] = 0
    cuda.syncthreads()
    for i in range(tid, child.size, step):
        m = child[i]
        cuda.atomic.add(sub, m, qty[i] * price[i, m])
        cuda.atomic.add(units, m, qty[i])
    cuda.syncthreads()
    part = _merchant_costs(tid, step, sub, units, params, mcost)
    return block_sum(part, red_v)


@cuda.jit(device=True)
def descend(
    steps, total, child, qty, price, cand, cnt, params, sub, units, mcost, removal, red_v, red_i
):
    """Up to ``steps`` best single-line moves (ga_cpu.descend); returns the total."""
    tid = cuda.threadIdx.x
    step = cuda.blockDim.x
    width = cand.shape[1]
    for _ in range(steps):
        _removals(tid, step, child, qty, price, params, sub, units, mcost, removal)
        cuda.syncthreads()
        delta, pair = _scan_pairs(
            tid, step, child, removal, qty, price, cand, cnt, params, sub, units, mcost
        )
        delta, pair = block_best(delta, pair, red_v, red_i)
        if pair == NO_MOVE:
            break
        if tid == 0:
            i = pair // width
            _move_line(i, cand[i, pair - i * width], child, qty, price, params, sub, units, mcost)
        total += delta
        cuda.syncthreads()
    return total


@cuda.jit(device=True)
def close(u, child, qty, price, cand, cnt, params, sub, units, mcost, red_v):
    """Empty merchant ``u`` (ga_cpu.close_merchant); returns the new total."""
    _close_lines(
        cuda.threadIdx.x,
        cuda.blockDim.x,
        u,
        child,
        qty,
        price,
        cand,
        cnt,
        params,
        sub,
        units,
        mcost,
    )
    cuda.syncthreads()
    return aggregate(child, qty, price, params, sub, units, mcost, red_v)


@cuda.jit(device=True)
def grow(m, child, qty, price, params, sub, units, mcost, removal, keys, order, red_v, red_i):
    """Grow merchant ``m`` (ga_cpu.grow_merchant); returns the new total."""
    tid = cuda.threadIdx.x
    step = cuda.blockDim.x
    _removals(tid, step, child, qty, price, params, sub, units, mcost, removal)
    cuda.syncthreads()
    count = block_sum(_grow_keys(tid, step, m, child, removal, qty, price, keys), red_v)
    if count > 0:
        _grow_order(tid, step, keys, order)
        cuda.syncthreads()
        # One thread scans the prefixes in order (ga_ops.grow_scan), moving the lines
        # virtually through the shared per-merchant state; the others wait.
        if tid == 0:
            _, length = _grow_scan(m, count, order, child, qty, price, params, sub, units, mcost)
            red_i[0] = length
        cuda.syncthreads()
        length = red_i[0]
        cuda.syncthreads()
        _grow_apply(tid, step, m, length, order, child)
        cuda.syncthreads()
    return aggregate(child, qty, price, params, sub, units, mcost, red_v)


@cuda.jit(device=True)
def single_move(b, i, child, qty, price, params, sub, units, mcost, shared_total):
    """Thread 0 moves line ``i`` to ``b`` (if b >= 0); the change reaches every thread."""
    if cuda.threadIdx.x == 0:
        shared_total[0] = 0
        if b >= 0 and b != child[i]:
            shared_total[0] = _move_line(i, b, child, qty, price, params, sub, units, mcost)
    cuda.syncthreads()
    delta = shared_total[0]
    cuda.syncthreads()
    return delta


@cuda.jit(device=True)
def mutate(
    draws,
    total,
    child,
    elite,
    qty,
    price,
    cand,
    cnt,
    params,
    sub,
    units,
    mcost,
    removal,
    keys,
    order,
    red_v,
    red_i,
    shared_total,
):
    """The mutation the draws select (ga_cpu.mutate); returns the new total."""
    kind = rand_below(draws[D_KIND], N_MUTATIONS)
    i = rand_below(draws[D_LINE], child.size)
    if kind == MUT_MOVE_TO_USED:
        b = -1
        if cuda.threadIdx.x == 0:
            b = _used_target(i, draws[D_PICK], child, cand, cnt, units)
        total += single_move(b, i, child, qty, price, params, sub, units, mcost, shared_total)
    elif kind == MUT_EMPTY_MERCHANT:
        u = child[i]
        cuda.syncthreads()
        total = close(u, child, qty, price, cand, cnt, params, sub, units, mcost, red_v)
    elif kind == MUT_ELITE_GROUP:
        _copy_group(cuda.threadIdx.x, cuda.blockDim.x, elite, elite[i], child)
        cuda.syncthreads()
        total = aggregate(child, qty, price, params, sub, units, mcost, red_v)
    elif kind == MUT_GROW_MERCHANT:
        m = cand[i, rand_below(draws[D_PICK], cnt[i])]
        total = grow(
            m, child, qty, price, params, sub, units, mcost, removal, keys, order, red_v, red_i
        )
    elif kind == MUT_RANDOM_LINE:
        b = cand[i, rand_below(draws[D_PICK], cnt[i])]
        total += single_move(b, i, child, qty, price, params, sub, units, mcost, shared_total)
    return total
