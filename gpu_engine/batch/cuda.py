"""The batch solver's CUDA kernels (numba-cuda); CPU twin: :mod:`gpu_engine.batch.cpu`. Their
host side: :mod:`gpu_engine.batch.launch` (the whole batch copied first) and
:mod:`gpu_engine.batch.overlap` (chunk by chunk behind the copies).

Plan kernel: thread ``i`` of a launch over carts ``lo .. hi - 1`` plans cart ``lo + i``
(:func:`gpu_engine.batch.ops.plan_cart`, the step the CPU plan runs under ``prange``).

Solve kernel: one block per cart, ``T`` threads a block, by the method the plan chose. Which
cart block ``b`` solves is the kernel's mode: RANGE, cart ``lo + b``; LIGHT, the same but
carts at least a tier's floor (:data:`TIERS`) leave to a tier launch; INDEXED, cart
``order[lo + b]`` (a tier's carts, heaviest first, on blocks of up to 1024 threads). Within
a block:

* FULL (exact full search): thread ``t`` prices assignments ``t, t + T, ...`` of the cart's
  mixed-radix numbering and keeps its cheapest (lowest index on ties); the engine's shared
  block reduction (:func:`gpu_engine.cuda_ops.reduce.group_min_in`, the (total, index) order of
  :mod:`gpu_engine.cuda_ops.order`) leaves the block's best, which thread 0 decodes.
* DP (exact merchant-by-merchant subset DP over the cart's free lines): per merchant, thread
  ``t`` fills entries ``t, t + T, ...`` of the merchant's cost table, then computes line sets
  ``t, t + T, ...`` of the next layer from the previous one (two buffers: no thread reads what
  another writes in the same layer); ``syncthreads`` separates the phases. Each thread keeps
  its own copy of the merchant's line list (a few registers' worth, no sync needed). Merchants
  the plan marked ``skip`` (dominated single-line sellers, merchants whose offers were all
  pruned) get no layer. Thread 0 backtracks through the per-merchant choices. Carts the plan
  pruned (a ``bound``, :mod:`gpu_engine.batch.prune`) take the pushed layers instead
  (:func:`gpu_engine.batch.ops.push_layer`): thread ``t`` pushes the reached sets ``t, t + T,
  ...`` of the layer before into the next layer by an atomic minimum on (cost, choice) keys,
  the first push into a set appends it to the next list (a shared counter), and the merchant's
  costs are priced on first use.

The plan kernel prunes before it plans (:func:`gpu_engine.batch.prune.prune_cart`, one thread
a cart, reordering the device copy of the cart's offers). The DP tables live in global scratch
(``ws`` int64: two layers, the cost table, two lists; ``pick`` uint16) at the cart's offsets.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import numba
from numba import cuda, int64

from gpu_engine.batch import ops
from gpu_engine.batch import prune as prune_ops
from gpu_engine.batch.ops import REST_TABLES
from gpu_engine.batch.pack import DP, FULL, MAX_DP_LINES, MAX_FULL_LINES, CartArrays
from gpu_engine.cuda_ops.reduce import group_min_in
from gpu_engine.cuda_ops.variants import cached_kernel, source_tag, variant_name
from gpu_engine.device import simulator_enabled
from gpu_engine.pricing import merchant_cost
from gpu_engine.solvers.dp import ops as dp_ops
from gpu_engine.solvers.ga.ops_v2 import twins

THREADS = 64
PLAN_THREADS = 128
SIMULATOR_THREADS = 4
# Kernel modes (see _build).
RANGE, LIGHT, INDEXED = 0, 1, 2
# Carts by estimated steps: (floor, threads a block) from the heaviest tier down; carts below
# the last floor run on THREADS-thread blocks. A tier's blocks have work for every thread.
TIERS = ((1 << 20, 1024), (1 << 16, 256))

_full_search = cuda.jit(device=True)(ops.full_search)
_decode_full = cuda.jit(device=True)(ops.decode_full)
_merchant_lines = cuda.jit(device=True)(ops.merchant_lines)
_cost_table = cuda.jit(device=True)(ops.cost_table)
_compress = cuda.jit(device=True)(ops.compress)
_fill_layer = cuda.jit(device=True)(ops.fill_layer)
_assign_merchant = cuda.jit(device=True)(ops.assign_merchant)
_best_split = cuda.jit(device=True)(dp_ops.best_split)
_dp_tables = cuda.jit(device=True)(ops.dp_tables)
_plan_cart = cuda.jit(device=True)(ops.plan_cart)


def _atomic_relax_min(values, i, key):
    return cuda.atomic.min(values, i, key)


def _atomic_bump(counts, i):
    return cuda.atomic.add(counts, i, 1)


# The pruning and the pushed DP layers call helpers with arrays: compiled from their Python by
# cuda.jit (a CPU dispatcher cannot take the simulator's array wrappers), and the DP's
# relax_min bound to an atomic minimum (threads push into the same sets).
_device = twins(
    (
        merchant_cost.py_func,
        prune_ops.lb_offer.py_func,
        prune_ops.must_fee.py_func,
        prune_ops.fixed_fee.py_func,
        prune_ops.line_cost.py_func,
        prune_ops.least_goods.py_func,
        prune_ops.price_preferred.py_func,
        prune_ops.improve.py_func,
        prune_ops.keep_offer.py_func,
        prune_ops.prune_round.py_func,
        prune_ops.unpruned_steps.py_func,
        prune_ops.fee_shares.py_func,
        prune_ops.line_share.py_func,
        prune_ops.prune_by_shares.py_func,
        prune_ops.prune_cart,
        ops.rest_lines,
        ops.clear_costs,
        ops.rest_tables,
        ops.push_layer,
        ops.finish_layer,
    ),
    cuda.jit(device=True),
    bound={
        "relax_min": cuda.jit(device=True)(_atomic_relax_min),
        "bump": cuda.jit(device=True)(_atomic_bump),
    },
)
_prune_cart = _device["prune_cart"]
_rest_lines = _device["rest_lines"]
_clear_costs = _device["clear_costs"]
_rest_tables = _device["rest_tables"]
_push_layer = _device["push_layer"]
_finish_layer = _device["finish_layer"]

# Compiled kernels serve every device (numba loads a kernel into each context that launches
# it); the lock only guards building one, never a launch.
_kernels: dict = {}
_plan_kernel: list = []
_lock = threading.Lock()


def _solve_kernel_template(
    lo,
    scratch_lo,
    order,
    work,
    heavy_min,
    method,
    complexity,
    ws_ptr,
    pick_ptr,
    skip,
    offer_end,
    bound,
    fee_share,
    line_ptr,
    line_qty,
    offer_ptr,
    offer_merchant,
    offer_amount,
    merch_ptr,
    merch_row,
    base,
    extra,
    free_over,
    dmin,
    dbp,
    ws,
    pick,
    out_total,
    out_choice,
):
    if _MODE == INDEXED:
        c = order[lo + cuda.blockIdx.x]
    else:
        c = lo + cuda.blockIdx.x
        # The whole block leaves together (no barrier is waiting for it).
        if _MODE == LIGHT and work[c] >= heavy_min:
            return
    t = cuda.threadIdx.x
    n_threads = cuda.blockDim.x
    kind = method[c]
    l0 = line_ptr[c]
    n = line_ptr[c + 1] - l0
    m0 = merch_ptr[c]
    s_total = cuda.shared.array(_SHARED_SIZE, int64)
    s_index = cuda.shared.array(_SHARED_SIZE, int64)
    if kind == FULL:
        choice = cuda.local.array(MAX_FULL_LINES, _OFFER_T)
        best, index = _full_search(
            t,
            n_threads,
            l0,
            n,
            complexity[c],
            offer_ptr,
            offer_end,
            offer_merchant,
            offer_amount,
            line_qty,
            m0,
            merch_row,
            base,
            extra,
            free_over,
            dmin,
            dbp,
            choice,
        )
        # The block's cheapest (lowest index on ties), in every thread.
        best, index = group_min_in(best, index, n_threads, s_total, s_index)
        if t == 0:
            out_total[c] = best
            _decode_full(index, l0, n, offer_ptr, offer_end, offer_merchant, out_choice)
    elif kind == DP:
        n_merch = merch_ptr[c + 1] - m0
        size = (ws_ptr[c + 1] - ws_ptr[c]) // _dp_tables(bound[c])
        w0 = ws_ptr[c] - ws_ptr[scratch_lo]
        h_even = ws[w0 : w0 + size]
        h_odd = ws[w0 + size : w0 + 2 * size]
        cost = ws[w0 + 2 * size : w0 + 3 * size]
        # The dense layers have no lists (these slices, then past the cart's scratch, are unread).
        list_even = ws[w0 + 3 * size : w0 + 4 * size]
        list_odd = ws[w0 + 4 * size : w0 + 5 * size]
        counts = cuda.shared.array(2, int64)
        p0 = pick_ptr[c] - pick_ptr[scratch_lo]
        bits = cuda.local.array(MAX_DP_LINES, _OFFER_T)
        amounts = cuda.local.array(MAX_DP_LINES, _AMOUNT_T)
        units = cuda.local.array(MAX_DP_LINES, _QTY_T)
        rest = cuda.local.array(MAX_DP_LINES, int64)
        # Each thread its own copy of the later merchants' tables (no sync needed).
        # A local array's size is a global name: a module's attribute types as a runtime int64.
        tables = cuda.local.array(REST_TABLES, int64)
        upper = bound[c]
        # The same for every thread: the block takes the pushed or the dense layers.
        pushed = upper < ops.KEY_LIMIT
        k = 0
        while (1 << k) < size:
            k += 1
        _fill_layer(t, n_threads, size, h_even)
        if pushed:
            _fill_layer(t, n_threads, size, h_odd)
            if t == 0:  # thread 0 wrote entry 0 of both layers
                h_odd[0] = ops.INF
                list_even[0] = 0
                counts[0] = 1
        layer = 0
        for m in range(n_merch):
            if skip[m0 + m]:  # the same for every thread: the block skips together
                continue
            a, mask, sub0, units0 = _merchant_lines(
                m, l0, n, offer_ptr, offer_end, offer_merchant, offer_amount, line_qty,
                bits, amounts, units,
            )  # fmt: skip
            cuda.syncthreads()  # previous layer done, cost table free
            prev = h_even if layer % 2 == 0 else h_odd
            nxt = h_odd if layer % 2 == 0 else h_even
            row = p0 + m * size
            g = merch_row[m0 + m]
            if pushed:
                cur = layer % 2
                prev_list = list_even if cur == 0 else list_odd
                nxt_list = list_odd if cur == 0 else list_even
                if t == 0:
                    counts[1 - cur] = 0
                _clear_costs(t, n_threads, a, cost)
                forced_rest = _rest_lines(
                    m - 1, l0, n, m0, offer_ptr, offer_end, offer_merchant, offer_amount,
                    line_qty, merch_row, extra, dmin, dbp, skip, fee_share, rest,
                )  # fmt: skip
                _rest_tables(k, rest, tables)
                cuda.syncthreads()
                _push_layer(
                    t, n_threads, prev, prev_list, counts[cur], nxt, nxt_list, counts,
                    1 - cur, mask, a, bits, cost, tables, k, forced_rest, upper, sub0, units0,
                    amounts, units, g, base, extra, free_over, dmin, dbp,
                )  # fmt: skip
                cuda.syncthreads()
                _finish_layer(
                    t, n_threads, nxt, nxt_list, counts[1 - cur], pick, row, prev,
                    prev_list, counts[cur],
                )  # fmt: skip
            else:
                _cost_table(
                    t, n_threads, a, sub0, units0, amounts, units, g, base, extra,
                    free_over, dmin, dbp, cost,
                )  # fmt: skip
                cuda.syncthreads()
                for s in range(t, size, n_threads):
                    x = s & mask
                    best, best_t = _best_split(s, x, _compress(x, a, bits), prev, cost)
                    nxt[s] = best
                    pick[row + s] = best_t
            layer += 1
        cuda.syncthreads()
        if t == 0:
            s = size - 1
            out_total[c] = h_even[s] if layer % 2 == 0 else h_odd[s]
            for m in range(n_merch - 1, -1, -1):
                if skip[m0 + m]:
                    continue
                s ^= _assign_merchant(
                    m, pick[p0 + m * size + s], l0, n, offer_ptr, offer_end,
                    offer_merchant, out_choice,
                )  # fmt: skip
    elif t == 0:
        # Too large for the batch: every cart's block writes its total and choices (-1,
        # as the CPU twin), so the answers need no initialising copy.
        out_total[c] = -1
        for i in range(n):
            out_choice[l0 + i] = -1


# The solve template's globals that every variant replaces (compile-time constants); these
# values are never compiled.
_SHARED_SIZE = 1
_MODE = RANGE
_OFFER_T = _AMOUNT_T = _QTY_T = int64
# The modules the batch kernels' code comes from: a change to any of them names new variants.
_SOURCES = (
    "gpu_engine.batch.cuda",
    "gpu_engine.batch.ops",
    "gpu_engine.batch.prune",
    "gpu_engine.solvers.dp.ops",
    "gpu_engine.solvers.ga.ops_v2",
    "gpu_engine.pricing",
    "gpu_engine.cuda_ops.reduce",
)


def _build(shared_size: int, mode: int, offer_type, amount_type, qty_type):
    """The solve kernel for blocks of up to ``shared_size`` threads (the reduction's shared
    slots), a variant of :func:`_solve_kernel_template` that numba keeps on disk
    (:mod:`gpu_engine.cuda_ops.variants`). Its per-thread scratch (offer indexes, the DP's line
    numbers, amounts and units) has the types of the device arrays they are copied from
    (``offer_ptr``, ``offer_amount``, ``line_qty``): half the local memory when the batch
    travels narrow, never a truncation. ``mode`` (a compile-time constant): RANGE, block ``b``
    solves cart ``lo + b``; LIGHT, the same but carts with ``work >= heavy_min`` are left to a
    tier launch; INDEXED, block ``b`` solves cart ``order[lo + b]``. Cart ``c``'s scratch
    starts at its offset less that of cart ``scratch_lo``."""
    replaced = {
        "_SHARED_SIZE": shared_size,
        "_MODE": mode,
        "_OFFER_T": offer_type,
        "_AMOUNT_T": amount_type,
        "_QTY_T": qty_type,
    }
    parts = (shared_size, mode, offer_type, amount_type, qty_type, source_tag(*_SOURCES))
    return cached_kernel(
        _solve_kernel_template,
        name=variant_name("batch_solve", parts),
        replaced=replaced,
        jit=cuda.jit,
    )


def get_solve_kernel(d: dict, shared_size: int = THREADS, mode: int = RANGE):
    """The solve kernel for ``d``'s array types (see :func:`_build`)."""
    types = tuple(d[name].dtype for name in ("offer_ptr", "offer_amount", "line_qty"))
    key = (shared_size, mode, *types)
    kernel = _kernels.get(key)
    if kernel is None:
        with _lock:
            if key not in _kernels:
                _kernels[key] = _build(shared_size, mode, *(numba.from_dtype(t) for t in types))
            kernel = _kernels[key]
    return kernel


def _plan_kernel_template(
    lo,
    hi,
    line_ptr,
    line_qty,
    offer_ptr,
    offer_merchant,
    offer_amount,
    merch_ptr,
    merch_row,
    base,
    extra,
    free_over,
    dmin,
    dbp,
    max_work,
    prefer,
    prune,
    served,
    forced,
    method,
    complexity,
    work,
    ws,
    pick,
    skip,
    sub,
    units,
    slack,
    line_v,
    offer_end,
    bound,
):
    c = lo + cuda.grid(1)
    if c < hi:
        _prune_cart(
            c,
            line_ptr,
            line_qty,
            offer_ptr,
            offer_merchant,
            offer_amount,
            merch_ptr,
            merch_row,
            base,
            extra,
            free_over,
            dmin,
            dbp,
            prune,
            sub,
            units,
            slack,
            line_v,
            offer_end,
            bound,
        )
        _plan_cart(
            c,
            line_ptr,
            line_qty,
            offer_ptr,
            offer_merchant,
            offer_amount,
            merch_ptr,
            merch_row,
            base,
            extra,
            free_over,
            dmin,
            dbp,
            offer_end,
            bound,
            max_work,
            prefer,
            served,
            forced,
            method,
            complexity,
            work,
            ws,
            pick,
            skip,
        )


def _build_plan():
    """The plan kernel, kept on disk by numba under a name that changes with its sources."""
    return cached_kernel(
        _plan_kernel_template,
        name=variant_name("batch_plan", [source_tag(*_SOURCES)]),
        replaced={},
        jit=cuda.jit,
    )


def get_plan_kernel():
    if not _plan_kernel:
        with _lock:
            if not _plan_kernel:
                _plan_kernel.append(_build_plan())
    return _plan_kernel[0]


def solve_kernel_args(d: Mapping[str, Any]) -> tuple:
    """The solve kernel's arguments after ``lo, scratch_lo, order, work, heavy_min``, from the
    device arrays of ``d`` by name."""
    names = ("method", "complexity", "ws_ptr", "pick_ptr", "skip", "offer_end", "bound")
    # The plan leaves the merchants' fee shares in its "slack" scratch.
    plan = (*(d[name] for name in names), d["slack"])
    out = tuple(d[name] for name in ("ws", "pick", "out_total", "out_choice"))
    return (*plan, *CartArrays.of(d), *out)


class Specialized:
    """A kernel compiled for one call's types, launched as ``kernel[grid, block](...)``.
    numba's own ``Dispatcher.specialize`` makes a dispatcher without the disk cache, compiled
    afresh in every process (5.5 s of a restarted gpu worker's warm-up on an H100 host); this
    one compiles through the kernel itself, so the variant loads from numba's cache."""

    def __init__(self, kernel, call: tuple) -> None:
        self.kernel = kernel
        self.argtypes = tuple(kernel.typeof_pyval(a) for a in call)
        self.compiled = kernel.compile(self.argtypes)

    def __getitem__(self, config):
        return self.kernel[config]

    def get_max_threads_per_block(self) -> int:
        return self.compiled.max_threads_per_block


def specialized(kernel, call: tuple, timings: dict, name: str):
    """``kernel`` compiled for ``call``'s types (the simulator's as it is); its registers and
    local memory a thread go to ``timings`` (spills show as local bytes)."""
    if simulator_enabled():
        return kernel
    spec = Specialized(kernel, call)
    timings[f"{name}_regs"] = spec.compiled.regs_per_thread
    timings[f"{name}_local_bytes"] = spec.compiled.local_mem_per_thread
    return spec


def block_threads(kernel, wanted: int) -> int:
    """``wanted`` or the largest power of two the compiled kernel can launch (registers)."""
    if simulator_enabled():
        return SIMULATOR_THREADS
    limit = kernel.get_max_threads_per_block()
    threads = wanted
    while threads > limit and threads > 32:
        threads //= 2
    return threads
