"""The batch solver's CUDA kernels (numba-cuda); CPU twin: :mod:`gpu_engine.batch.cpu`.

Plan kernel: thread ``c`` plans cart ``c`` (:func:`gpu_engine.batch.ops.plan_cart`, the step
the CPU plan runs under ``prange``), so the plan costs the host nothing but two small copies.

Solve kernel, thread-to-data mapping: one block per cart (block ``b`` of a launch over carts
``lo .. hi - 1`` solves cart ``lo + b``), ``T`` threads a block (64: two warps, so 32 resident
blocks fill an SM), by the method the plan chose:

* FULL (exact full search): thread ``t`` prices assignments ``t, t + T, ...`` of the cart's
  mixed-radix numbering and keeps its cheapest (lowest index on ties); the engine's shared
  block reduction (:func:`gpu_engine.cuda_ops.reduce.group_min_in`, the (total, index) order of
  :mod:`gpu_engine.cuda_ops.order`) leaves the block's best, which thread 0 decodes.
* DP (exact merchant-by-merchant subset DP over the cart's free lines): per merchant, thread
  ``t`` fills entries ``t, t + T, ...`` of the merchant's cost table, then computes line sets
  ``t, t + T, ...`` of the next layer from the previous one (two buffers: no thread reads what
  another writes in the same layer); ``syncthreads`` separates the phases. Each thread keeps
  its own copy of the merchant's line list (a few registers' worth, no sync needed). Merchants
  the plan marked ``skip`` (dominated single-line sellers) get no layer. Thread 0 backtracks
  through the per-merchant choices.

The DP tables live in global scratch (``ws`` int64, ``pick`` uint16) at the cart's offsets.
The whole batch is copied to the device once; a launch covers as many carts as the scratch
budget allows (usually all of them), and the answers come back in one copy.
"""

from __future__ import annotations

import threading
import time

import numpy as np
from numba import cuda, int64

from gpu_engine.batch import ops
from gpu_engine.batch.pack import (
    DP,
    FULL,
    MAX_DP_LINES,
    MAX_FULL_LINES,
    MAX_WORK,
    BatchPlan,
    PackedBatch,
    csr_offsets,
    plan_batch,
)
from gpu_engine.cuda_ops.reduce import group_min_in
from gpu_engine.device import simulator_enabled
from gpu_engine.solvers.dp import ops as dp_ops

THREADS = 64
PLAN_THREADS = 128
SIMULATOR_THREADS = 4
SIMULATOR_SCRATCH = 16 << 20
# Leave room for the batch itself, other kernels and the CUDA context on a shared card.
SCRATCH_FRACTION = 0.5

_full_search = cuda.jit(device=True)(ops.full_search)
_decode_full = cuda.jit(device=True)(ops.decode_full)
_merchant_lines = cuda.jit(device=True)(ops.merchant_lines)
_cost_table = cuda.jit(device=True)(ops.cost_table)
_compress = cuda.jit(device=True)(ops.compress)
_fill_layer = cuda.jit(device=True)(ops.fill_layer)
_assign_merchant = cuda.jit(device=True)(ops.assign_merchant)
_best_split = cuda.jit(device=True)(dp_ops.best_split)
_plan_cart = cuda.jit(device=True)(ops.plan_cart)

_kernel: list = []
_plan_kernel: list = []
_lock = threading.Lock()


def _build():
    @cuda.jit
    def kernel(
        lo,
        method,
        complexity,
        ws_ptr,
        pick_ptr,
        skip,
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
        c = lo + cuda.blockIdx.x
        t = cuda.threadIdx.x
        n_threads = cuda.blockDim.x
        kind = method[c]
        l0 = line_ptr[c]
        n = line_ptr[c + 1] - l0
        m0 = merch_ptr[c]
        s_total = cuda.shared.array(THREADS, int64)
        s_index = cuda.shared.array(THREADS, int64)
        if kind == FULL:
            choice = cuda.local.array(MAX_FULL_LINES, int64)
            best, index = _full_search(
                t,
                n_threads,
                l0,
                n,
                complexity[c],
                offer_ptr,
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
                _decode_full(index, l0, n, offer_ptr, offer_merchant, out_choice)
        elif kind == DP:
            n_merch = merch_ptr[c + 1] - m0
            size = (ws_ptr[c + 1] - ws_ptr[c]) // 3
            w0 = ws_ptr[c] - ws_ptr[lo]
            h_even = ws[w0 : w0 + size]
            h_odd = ws[w0 + size : w0 + 2 * size]
            cost = ws[w0 + 2 * size : w0 + 3 * size]
            p0 = pick_ptr[c] - pick_ptr[lo]
            bits = cuda.local.array(MAX_DP_LINES, int64)
            amounts = cuda.local.array(MAX_DP_LINES, int64)
            units = cuda.local.array(MAX_DP_LINES, int64)
            _fill_layer(t, n_threads, size, h_even)
            layer = 0
            for m in range(n_merch):
                if skip[m0 + m]:  # the same for every thread: the block skips together
                    continue
                a, mask, sub0, units0 = _merchant_lines(
                    m,
                    l0,
                    n,
                    offer_ptr,
                    offer_merchant,
                    offer_amount,
                    line_qty,
                    bits,
                    amounts,
                    units,
                )
                cuda.syncthreads()  # previous layer done, cost table free
                _cost_table(
                    t,
                    n_threads,
                    a,
                    sub0,
                    units0,
                    amounts,
                    units,
                    merch_row[m0 + m],
                    base,
                    extra,
                    free_over,
                    dmin,
                    dbp,
                    cost,
                )
                cuda.syncthreads()
                prev = h_even if layer % 2 == 0 else h_odd
                nxt = h_odd if layer % 2 == 0 else h_even
                row = p0 + m * size
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
                        m, pick[p0 + m * size + s], l0, n, offer_ptr, offer_merchant, out_choice
                    )

    return kernel


def _get_kernel():
    with _lock:
        if not _kernel:
            _kernel.append(_build())
    return _kernel[0]


def _build_plan():
    @cuda.jit
    def plan_kernel(
        n_carts,
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
        served,
        forced,
        method,
        complexity,
        work,
        ws,
        pick,
        skip,
    ):
        c = cuda.grid(1)
        if c < n_carts:
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

    return plan_kernel


def _get_plan_kernel():
    with _lock:
        if not _plan_kernel:
            _plan_kernel.append(_build_plan())
    return _plan_kernel[0]


def scratch_limit() -> int:
    if simulator_enabled():
        return SIMULATOR_SCRATCH
    free, _total = cuda.current_context().get_memory_info()
    return int(free * SCRATCH_FRACTION)


def _upload(arrays: dict[str, np.ndarray]) -> dict:
    return {name: cuda.to_device(np.ascontiguousarray(value)) for name, value in arrays.items()}


def solve_gpu(
    batch: PackedBatch,
    *,
    prefer: int | None = None,
    max_work: int = MAX_WORK,
    timings: dict[str, float] | None = None,
) -> tuple[np.ndarray, np.ndarray, BatchPlan]:
    """(total per cart, cart-local merchant per line, the plan) on the GPU; carts planned
    TOO_LARGE keep total -1. One copy in; the plan kernel; the plan's small arrays out and the
    scratch offsets in; one solve launch per scratch-sized range of carts; one copy out.
    ``timings`` receives ``copy_in_ms``, ``plan_ms``, ``kernel_ms`` and ``copy_out_ms``."""
    timings = {} if timings is None else timings
    if batch.n_carts == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), plan_batch(batch)
    threads = SIMULATOR_THREADS if simulator_enabled() else THREADS
    t0 = time.perf_counter()
    d = _upload(
        {
            "line_ptr": batch.line_ptr,
            "line_qty": batch.line_qty,
            "offer_ptr": batch.offer_ptr,
            "offer_merchant": batch.offer_merchant,
            "offer_amount": batch.offer_amount,
            "merch_ptr": batch.merch_ptr,
            "merch_row": batch.merch_row,
            "base": batch.base,
            "extra": batch.extra,
            "free_over": batch.free_over,
            "dmin": batch.dmin,
            "dbp": batch.dbp,
        }
    )
    cuda.synchronize()
    t1 = time.perf_counter()
    plan = _plan_on_device(batch, d, prefer=-1 if prefer is None else prefer, max_work=max_work)
    d.update(_upload({"ws_ptr": plan.ws_ptr, "pick_ptr": plan.pick_ptr}))
    t2 = time.perf_counter()
    chunks = plan.chunks(scratch_limit())
    out_total = cuda.to_device(np.full(batch.n_carts, -1, dtype=np.int64))
    out_choice = cuda.device_array(max(1, batch.line_qty.size), dtype=np.int64)
    ws_size = max([int(plan.ws_ptr[hi] - plan.ws_ptr[lo]) for lo, hi in chunks] + [1])
    pick_size = max([int(plan.pick_ptr[hi] - plan.pick_ptr[lo]) for lo, hi in chunks] + [1])
    ws = cuda.device_array(ws_size, dtype=np.int64)
    pick = cuda.device_array(pick_size, dtype=np.uint16)
    kernel = _get_kernel()
    for lo, hi in chunks:
        kernel[hi - lo, threads](
            np.int64(lo),
            d["method"],
            d["complexity"],
            d["ws_ptr"],
            d["pick_ptr"],
            d["skip"],
            d["line_ptr"],
            d["line_qty"],
            d["offer_ptr"],
            d["offer_merchant"],
            d["offer_amount"],
            d["merch_ptr"],
            d["merch_row"],
            d["base"],
            d["extra"],
            d["free_over"],
            d["dmin"],
            d["dbp"],
            ws,
            pick,
            out_total,
            out_choice,
        )
    cuda.synchronize()
    t3 = time.perf_counter()
    total, choice = out_total.copy_to_host(), out_choice.copy_to_host()[: batch.line_qty.size]
    timings.update(
        copy_in_ms=(t1 - t0) * 1e3,
        plan_ms=(t2 - t1) * 1e3,
        kernel_ms=(t3 - t2) * 1e3,
        copy_out_ms=(time.perf_counter() - t3) * 1e3,
        launches=len(chunks) + 1,
    )
    return total, choice, plan


def _plan_on_device(batch: PackedBatch, d: dict, *, prefer: int, max_work: int) -> BatchPlan:
    """Thread ``c`` plans cart ``c`` (:func:`gpu_engine.batch.ops.plan_cart`); the plan's
    arrays stay on the device (``d``) for the solve kernel and come back for the host."""
    n_carts, n_merch = batch.n_carts, int(batch.merch_ptr[-1])
    for name, size, dtype in (
        ("served", n_merch, np.int32),
        ("forced", n_merch, np.int32),
        ("skip", n_merch, np.int8),
        ("method", n_carts, np.int8),
        ("complexity", n_carts, np.int64),
        ("work", n_carts, np.int64),
        ("ws", n_carts, np.int64),
        ("pick", n_carts, np.int64),
    ):
        d[name] = cuda.device_array(max(1, size), dtype=dtype)
    threads = SIMULATOR_THREADS if simulator_enabled() else PLAN_THREADS
    _get_plan_kernel()[-(-n_carts // threads), threads](
        np.int64(n_carts),
        d["line_ptr"],
        d["line_qty"],
        d["offer_ptr"],
        d["offer_merchant"],
        d["offer_amount"],
        d["merch_ptr"],
        d["merch_row"],
        d["base"],
        d["extra"],
        d["free_over"],
        d["dmin"],
        d["dbp"],
        np.int64(max_work),
        np.int64(prefer),
        d["served"],
        d["forced"],
        d["method"],
        d["complexity"],
        d["work"],
        d["ws"],
        d["pick"],
        d["skip"],
    )
    host = {k: d[k].copy_to_host() for k in ("method", "complexity", "work", "ws", "pick", "skip")}
    return BatchPlan(
        method=host["method"][:n_carts],
        complexity=host["complexity"][:n_carts],
        work=host["work"][:n_carts],
        ws_ptr=csr_offsets(host["ws"][:n_carts]),
        pick_ptr=csr_offsets(host["pick"][:n_carts]),
        skip=host["skip"][:n_merch],
    )
