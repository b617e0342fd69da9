"""Block-level steps of the GA's kernels for version 2 carts (:mod:`.cuda_v2`), each the
twin of a step of :mod:`.cpu_v2` named in its docstring.

As in :mod:`.cuda_blocks`: every thread of a block calls each step with the block's shared
arrays, thread ``t`` of ``T`` takes the strided ranges of :mod:`.ops_v2` (compiled here by
``cuda.jit``, with the spec's parcel pricing compiled from its source, see :mod:`.ops_v2`),
sums are shared-memory atomics (integers: order-free) and best moves block reductions.
``P`` below is the problem arrays of :mod:`.ops_v2`, spelled out: ``qty, wgt, price, cand, cnt,
colp, tier_up, tier_fee, ownp``.
"""

from __future__ import annotations

from numba import cuda

from gpu_engine.pricing import parcel_fee, weight_fee
from gpu_engine.solvers.ga import ops_v2
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
from gpu_engine.solvers.ga.cuda_blocks import (
    _copy_group,
    _grow_apply,
    _grow_keys,
    _grow_order,
    _used_target,
    block_best,
    block_sum,
)
from gpu_engine.solvers.ga.ops_v2 import C_OWNER, S_FEE, S_GRAMS, S_PARCELS, S_SUB, S_UNITS
from gpu_engine.solvers.ga.rng import rand_below

_device = cuda.jit(device=True)
_pricing = ops_v2.twins((weight_fee.py_func, parcel_fee.py_func), _device)
_ops = ops_v2.twins(ops_v2.FUNCTIONS, _device, bound={"parcel_fee": _pricing["parcel_fee"]})
_column_fees = _ops["column_fees"]
_owner_costs = _ops["owner_costs"]
_removals = _ops["removals"]
_scan_pairs = _ops["scan_pairs"]
_close_lines = _ops["close_lines"]
_grow_scan = _ops["grow_scan"]
_move_line = _ops["move_line"]


@cuda.jit(device=True)
def aggregate(child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost, red_v):
    """The state of ``child`` from scratch (cpu_v2.aggregate); the total to every thread."""
    tid = cuda.threadIdx.x
    step = cuda.blockDim.x
    n_columns = colp.shape[1]
    for c in range(tid, n_columns, step):
        for r in range(cst.shape[0]):
            cst[r, c] = 0
    for o in range(tid, ownp.shape[1], step):
        for r in range(ost.shape[0]):
            ost[r, o] = 0
    cuda.syncthreads()
    for i in range(tid, child.size, step):
        c = child[i]
        cuda.atomic.add(cst, (S_SUB, c), qty[i] * price[i, c])
        cuda.atomic.add(cst, (S_UNITS, c), qty[i])
        cuda.atomic.add(cst, (S_GRAMS, c), qty[i] * wgt[i])
    cuda.syncthreads()
    _column_fees(tid, step, colp, tier_up, tier_fee, cst)
    cuda.syncthreads()
    for c in range(tid, n_columns, step):
        o = colp[C_OWNER, c]
        cuda.atomic.add(ost, (S_SUB, o), cst[S_SUB, c])
        cuda.atomic.add(ost, (S_UNITS, o), cst[S_UNITS, c])
        cuda.atomic.add(ost, (S_PARCELS, o), cst[S_FEE, c])
    cuda.syncthreads()
    part = _owner_costs(tid, step, ownp, ost)
    return block_sum(part, red_v)


@cuda.jit(device=True)
def descend(
    steps,
    total,
    child,
    qty,
    wgt,
    price,
    cand,
    cnt,
    colp,
    tier_up,
    tier_fee,
    ownp,
    cst,
    ost,
    removal,
    red_v,
    red_i,
):
    """Up to ``steps`` best single-line moves (cpu_v2.descend); returns the total."""
    tid = cuda.threadIdx.x
    step = cuda.blockDim.x
    width = cand.shape[1]
    for _ in range(steps):
        _removals(
            tid, step, child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost, removal
        )
        cuda.syncthreads()
        delta, pair = _scan_pairs(
            tid,
            step,
            child,
            removal,
            qty,
            wgt,
            price,
            cand,
            cnt,
            colp,
            tier_up,
            tier_fee,
            ownp,
            cst,
            ost,
        )
        delta, pair = block_best(delta, pair, red_v, red_i)
        if pair == NO_MOVE:
            break
        if tid == 0:
            i = pair // width
            b = cand[i, pair - i * width]
            _move_line(i, b, child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost)
        total += delta
        cuda.syncthreads()
    return total


@cuda.jit(device=True)
def close(u, child, qty, wgt, price, cand, cnt, colp, tier_up, tier_fee, ownp, cst, ost, red_v):
    """Empty column ``u`` (cpu_v2.close_column); returns the new total."""
    _close_lines(
        cuda.threadIdx.x,
        cuda.blockDim.x,
        u,
        child,
        qty,
        wgt,
        price,
        cand,
        cnt,
        colp,
        tier_up,
        tier_fee,
        ownp,
        cst,
        ost,
    )
    cuda.syncthreads()
    return aggregate(child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost, red_v)


@cuda.jit(device=True)
def grow(
    m,
    child,
    qty,
    wgt,
    price,
    colp,
    tier_up,
    tier_fee,
    ownp,
    cst,
    ost,
    removal,
    keys,
    order,
    red_v,
    red_i,
):
    """Grow column ``m`` (cpu_v2.grow_column); returns the new total."""
    tid = cuda.threadIdx.x
    step = cuda.blockDim.x
    _removals(tid, step, child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost, removal)
    cuda.syncthreads()
    count = block_sum(_grow_keys(tid, step, m, child, removal, qty, price, keys), red_v)
    if count > 0:
        _grow_order(tid, step, keys, order)
        cuda.syncthreads()
        # One thread shifts the lines in order through the shared state (ops_v2.grow_scan).
        if tid == 0:
            _, length = _grow_scan(
                m, count, order, child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost
            )
            red_i[0] = length
        cuda.syncthreads()
        length = red_i[0]
        cuda.syncthreads()
        _grow_apply(tid, step, m, length, order, child)
        cuda.syncthreads()
    return aggregate(child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost, red_v)


@cuda.jit(device=True)
def single_move(
    b, i, child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost, shared_total
):
    """Thread 0 moves line ``i`` to ``b`` (if b >= 0); the change reaches every thread."""
    if cuda.threadIdx.x == 0:
        shared_total[0] = 0
        if b >= 0 and b != child[i]:
            shared_total[0] = _move_line(
                i, b, child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost
            )
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
    wgt,
    price,
    cand,
    cnt,
    colp,
    tier_up,
    tier_fee,
    ownp,
    cst,
    ost,
    removal,
    keys,
    order,
    red_v,
    red_i,
    shared_total,
):
    """The mutation the draws select (cpu_v2.mutate); returns the new total."""
    kind = rand_below(draws[D_KIND], N_MUTATIONS)
    i = rand_below(draws[D_LINE], child.size)
    if kind == MUT_MOVE_TO_USED:
        b = -1
        if cuda.threadIdx.x == 0:
            b = _used_target(i, draws[D_PICK], child, cand, cnt, cst[S_UNITS])
        total += single_move(
            b, i, child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost, shared_total
        )
    elif kind == MUT_EMPTY_MERCHANT:
        u = child[i]
        cuda.syncthreads()
        total = close(
            u, child, qty, wgt, price, cand, cnt, colp, tier_up, tier_fee, ownp, cst, ost, red_v
        )
    elif kind == MUT_ELITE_GROUP:
        _copy_group(cuda.threadIdx.x, cuda.blockDim.x, elite, elite[i], child)
        cuda.syncthreads()
        total = aggregate(child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost, red_v)
    elif kind == MUT_GROW_MERCHANT:
        m = cand[i, rand_below(draws[D_PICK], cnt[i])]
        total = grow(
            m,
            child,
            qty,
            wgt,
            price,
            colp,
            tier_up,
            tier_fee,
            ownp,
            cst,
            ost,
            removal,
            keys,
            order,
            red_v,
            red_i,
        )
    elif kind == MUT_RANDOM_LINE:
        b = cand[i, rand_below(draws[D_PICK], cnt[i])]
        total += single_move(
            b, i, child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost, shared_total
        )
    return total
