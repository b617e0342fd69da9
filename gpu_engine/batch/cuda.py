"""The batch solver's CUDA kernels (numba-cuda); CPU twin: :mod:`gpu_engine.batch.cpu`.

Plan kernel: thread ``i`` of a launch over carts ``lo .. hi - 1`` plans cart ``lo + i``
(:func:`gpu_engine.batch.ops.plan_cart`, the step the CPU plan runs under ``prange``), so the
plan costs the host nothing but two small copies ("overlap" plans chunk by chunk:
:mod:`gpu_engine.batch.overlap`).

Solve kernel, thread-to-data mapping: one block per cart, ``T`` threads a block, by the
method the plan chose. Which cart a block solves depends on the launch (``solve_gpu``'s
variant): "baseline"/"pinned", block ``b`` of a launch over carts ``lo .. hi - 1`` solves cart
``lo + b`` (T = 64); the split variants first launch the heavy carts (estimated steps at least
a tier's floor, :data:`TIERS`), block ``b`` of a tier solving its ``b``-th heaviest cart with
T up to 1024, then every other cart ``b`` on block ``b`` (T = 64 or one warp), each launch on
its own stream. Within a block:

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

The DP tables live in global scratch (``ws`` int64, ``pick`` uint16) at the cart's offsets;
except in "baseline", the scratch is kept between batches (gigabytes at 1M carts) and grown as
needed, one set per device (:mod:`gpu_engine.batch.kept`: a thread on another GPU neither
reads these buffers nor waits for their lock).
The whole batch is copied to the device once (pinned and narrowed but in "baseline":
:mod:`gpu_engine.batch.staging`); a range launch covers as many carts as the scratch budget
allows (usually all of them; the split variants need the whole batch's scratch at once, else
they run as "pinned"), and the answers come back in one copy.
"""

from __future__ import annotations

import threading
import time

import numba
import numpy as np
from numba import cuda, int64

from gpu_engine.batch import ops, staging
from gpu_engine.batch.kept import DeviceKept, every_device, kept_here
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
# Scratch kept between batches (all but "baseline") holds at most this share of the device.
KEEP_SCRATCH_FRACTION = 0.25
# Kernel modes (see _build).
RANGE, LIGHT, INDEXED = 0, 1, 2
# Carts by estimated steps: (floor, threads a block) from the heaviest tier down; carts below
# the last floor run on THREADS-thread blocks. A tier's blocks have work for every thread.
TIERS = ((1 << 20, 1024), (1 << 16, 256))
# How the batch reaches the device (solve_gpu): the default is the one measured fastest.
VARIANTS = ("baseline", "pinned", "split", "split256", "split-warp", "overlap")
# Per split variant: (the tiers' largest block, the light carts' block).
SPLIT = {"split": (1024, THREADS), "split256": (256, THREADS), "split-warp": (1024, 32)}
# "overlap" hides the copy in (a host cast, then the bus) behind the kernels chunk by chunk and
# keeps its device arrays between batches. Measured on an H100 (BENCHMARKS.md, issue 14): at 1M
# carts it beat "split-warp" (222.5 vs 299.6 ms), at 100k its chunks are too small to hide the
# cast and "split-warp" won (47.1 vs 62.5 ms); the default picks by batch size between them.
DEFAULT_VARIANT = "overlap"
SMALL_BATCH_VARIANT = "split-warp"
OVERLAP_MIN_CARTS = 300_000


def default_variant(n_carts: int) -> str:
    """The measured-fastest variant for a batch of ``n_carts``."""
    return DEFAULT_VARIANT if n_carts >= OVERLAP_MIN_CARTS else SMALL_BATCH_VARIANT


_full_search = cuda.jit(device=True)(ops.full_search)
_decode_full = cuda.jit(device=True)(ops.decode_full)
_merchant_lines = cuda.jit(device=True)(ops.merchant_lines)
_cost_table = cuda.jit(device=True)(ops.cost_table)
_compress = cuda.jit(device=True)(ops.compress)
_fill_layer = cuda.jit(device=True)(ops.fill_layer)
_assign_merchant = cuda.jit(device=True)(ops.assign_merchant)
_best_split = cuda.jit(device=True)(dp_ops.best_split)
_plan_cart = cuda.jit(device=True)(ops.plan_cart)

# Compiled kernels serve every device (numba loads a kernel into each context that launches
# it); the lock only guards building one, never a launch.
_kernels: dict = {}
_plan_kernel: list = []
_lock = threading.Lock()


def _build(shared_size: int, mode: int, offer_type, amount_type, qty_type):
    """The solve kernel for blocks of up to ``shared_size`` threads (the reduction's shared
    slots). Its per-thread scratch (offer indexes, the DP's line numbers, amounts and units)
    has the types of the device arrays they are copied from (``offer_ptr``, ``offer_amount``,
    ``line_qty``): half the local memory when the batch travels narrow, never a truncation.
    ``mode`` (a compile-time constant): RANGE, block ``b`` solves cart ``lo + b``;
    LIGHT, the same but carts with ``work >= heavy_min`` are left to a tier launch; INDEXED,
    block ``b`` solves cart ``order[lo + b]``. Cart ``c``'s scratch starts at its offset
    less that of cart ``scratch_lo``."""

    @cuda.jit
    def kernel(
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
        if mode == INDEXED:
            c = order[lo + cuda.blockIdx.x]
        else:
            c = lo + cuda.blockIdx.x
            # The whole block leaves together (no barrier is waiting for it).
            if mode == LIGHT and work[c] >= heavy_min:
                return
        t = cuda.threadIdx.x
        n_threads = cuda.blockDim.x
        kind = method[c]
        l0 = line_ptr[c]
        n = line_ptr[c + 1] - l0
        m0 = merch_ptr[c]
        s_total = cuda.shared.array(shared_size, int64)
        s_index = cuda.shared.array(shared_size, int64)
        if kind == FULL:
            choice = cuda.local.array(MAX_FULL_LINES, offer_type)
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
            w0 = ws_ptr[c] - ws_ptr[scratch_lo]
            h_even = ws[w0 : w0 + size]
            h_odd = ws[w0 + size : w0 + 2 * size]
            cost = ws[w0 + 2 * size : w0 + 3 * size]
            p0 = pick_ptr[c] - pick_ptr[scratch_lo]
            bits = cuda.local.array(MAX_DP_LINES, offer_type)
            amounts = cuda.local.array(MAX_DP_LINES, amount_type)
            units = cuda.local.array(MAX_DP_LINES, qty_type)
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
        elif t == 0:
            # Too large for the batch: every cart's block writes its total and choices (-1,
            # as the CPU twin), so the answers need no initialising copy.
            out_total[c] = -1
            for i in range(n):
                out_choice[l0 + i] = -1

    return kernel


def _get_kernel(d: dict, shared_size: int = THREADS, mode: int = RANGE):
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


def _build_plan():
    @cuda.jit
    def plan_kernel(
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
        served,
        forced,
        method,
        complexity,
        work,
        ws,
        pick,
        skip,
    ):
        c = lo + cuda.grid(1)
        if c < hi:
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
    if not _plan_kernel:
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


def _batch_arrays(batch: PackedBatch) -> dict[str, np.ndarray]:
    return {
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


def solve_gpu(
    batch: PackedBatch,
    *,
    prefer: int | None = None,
    max_work: int = MAX_WORK,
    timings: dict[str, float] | None = None,
    variant: str | None = None,
) -> tuple[np.ndarray, np.ndarray, BatchPlan]:
    """(total per cart, cart-local merchant per line, the plan) on the GPU; carts planned
    TOO_LARGE keep total -1. One copy in; the plan kernel; the plan's small arrays out and the
    scratch offsets in; the solve launches; one copy out. ``variant`` (:data:`VARIANTS`) only
    changes how the work reaches the device, never an answer: "baseline" copies the int64
    arrays as they are and runs one launch per scratch-sized range of carts; "pinned" copies
    through pinned buffers in narrow types (:mod:`gpu_engine.batch.staging`) and keeps the
    DP scratch between batches; "split", "split256" and "split-warp" also give the heaviest
    carts bigger blocks, heaviest first, and the rest 64 or 32 threads (see
    :func:`_launch_split`); "overlap" runs the "split-warp" launches chunk by chunk, each
    chunk's copy in queued on its own stream behind the previous chunk's kernels
    (:mod:`gpu_engine.batch.overlap`). ``timings`` receives ``copy_in_ms``, ``plan_ms``,
    ``kernel_ms``, ``copy_out_ms`` (for "overlap": ``cast_ms``, ``plan_wait_ms``,
    ``enqueue_ms``, ``drain_ms``, ``gpu_ms``, ``chunks``), per copied array ``in_<name>_mb``
    and, where measured, its cast, call and copy milliseconds, the launch count and, for the
    split variants, each launch's carts, block size, registers and local bytes a thread.
    ``None`` means :data:`SMALL_BATCH_VARIANT`; "overlap" runs through
    :func:`gpu_engine.batch.gpu.solve_gpu`, which picks by size."""
    if variant is None:
        variant = SMALL_BATCH_VARIANT
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    timings = {} if timings is None else timings
    if batch.n_carts == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), plan_batch(batch)
    if variant == "overlap":
        raise ValueError("the overlap variant runs through gpu_engine.batch.gpu.solve_gpu")
    t0 = time.perf_counter()
    kept = kept_here()
    if variant == "baseline":
        d = _upload(_batch_arrays(batch))
    else:
        d = staging.upload(_batch_arrays(batch), timings, kept=kept)
    cuda.synchronize()
    t1 = time.perf_counter()
    plan = _plan_on_device(batch, d, prefer=-1 if prefer is None else prefer, max_work=max_work)
    d.update(_upload({"ws_ptr": plan.ws_ptr, "pick_ptr": plan.pick_ptr}))
    t2 = time.perf_counter()
    keep = variant != "baseline"
    with kept.lock:
        chunks = plan.chunks(scratch_limit() + (kept.scratch_bytes() if keep else 0))
        if keep:
            d["out_total"] = cuda.device_array(batch.n_carts, dtype=np.int64)
        else:
            d["out_total"] = cuda.to_device(np.full(batch.n_carts, -1, dtype=np.int64))
        d["out_choice"] = cuda.device_array(max(1, batch.line_qty.size), dtype=np.int64)
        ws_size = max([int(plan.ws_ptr[hi] - plan.ws_ptr[lo]) for lo, hi in chunks] + [1])
        pick_size = max([int(plan.pick_ptr[hi] - plan.pick_ptr[lo]) for lo, hi in chunks] + [1])
        d["ws"] = _scratch_array(kept, "ws", ws_size, np.int64, keep)
        d["pick"] = _scratch_array(kept, "pick", pick_size, np.uint16, keep)
        if variant in SPLIT and len(chunks) == 1:
            launches = _launch_split(plan, d, *SPLIT[variant], timings)
        else:
            launches = _launch_ranges(chunks, d)
        cuda.synchronize()
    t3 = time.perf_counter()
    total = d["out_total"].copy_to_host()
    choice = d["out_choice"].copy_to_host()[: batch.line_qty.size]
    timings.update(
        copy_in_ms=(t1 - t0) * 1e3,
        plan_ms=(t2 - t1) * 1e3,
        kernel_ms=(t3 - t2) * 1e3,
        copy_out_ms=(time.perf_counter() - t3) * 1e3,
        launches=launches + 1,
    )
    return total, choice, plan


def _scratch_array(kept: DeviceKept, name: str, size: int, dtype: type, keep: bool):
    """Device scratch of at least ``size`` entries on the current device, whose kept state is
    ``kept``. With ``keep``, one buffer per name is kept for the device and grown as needed (a
    gpu worker solves many batches: allocating and freeing gigabytes of DP tables each time
    costs milliseconds), unless it would hold more than :data:`KEEP_SCRATCH_FRACTION` of the
    device's memory. The caller holds ``kept.lock`` until its kernels are done."""
    if not keep:
        return cuda.device_array(size, dtype=dtype)
    held = kept.scratch.get(name)
    if held is not None and held.size >= size:
        return held
    kept.scratch.pop(name, None)
    grown = int(size * 1.25) + 1
    if simulator_enabled():
        cap = SIMULATOR_SCRATCH
    else:
        cap = int(cuda.current_context().get_memory_info()[1] * KEEP_SCRATCH_FRACTION)
    if grown * np.dtype(dtype).itemsize + kept.scratch_bytes() > cap:
        return cuda.device_array(size, dtype=dtype)
    held = cuda.device_array(grown, dtype=dtype)
    kept.scratch[name] = held
    return held


def release_scratch() -> None:
    """Give every device's kept scratch back (the next batch allocates again)."""
    for kept in every_device():
        with kept.lock:
            kept.scratch.clear()


def _kernel_args(d: dict) -> tuple:
    """The solve kernel's arguments after ``lo, scratch_lo, order, work, heavy_min``."""
    return tuple(
        d[name]
        for name in (
            "method",
            "complexity",
            "ws_ptr",
            "pick_ptr",
            "skip",
            "line_ptr",
            "line_qty",
            "offer_ptr",
            "offer_merchant",
            "offer_amount",
            "merch_ptr",
            "merch_row",
            "base",
            "extra",
            "free_over",
            "dmin",
            "dbp",
            "ws",
            "pick",
            "out_total",
            "out_choice",
        )
    )


def _launch_ranges(chunks: list[tuple[int, int]], d: dict) -> int:
    """One launch of ``THREADS``-thread blocks per scratch-sized range, cart ``lo + b`` on
    block ``b``, on the default stream (each range reuses the scratch of the one before)."""
    threads = SIMULATOR_THREADS if simulator_enabled() else THREADS
    kernel = _get_kernel(d, THREADS, RANGE)
    dummy = d["method"]
    for lo, hi in chunks:
        kernel[hi - lo, threads](
            np.int64(lo), np.int64(lo), dummy, d["work"], np.int64(0), *_kernel_args(d)
        )
    return len(chunks)


def _launch_split(
    plan: BatchPlan, d: dict, heavy_threads: int, light_threads: int, timings: dict
) -> int:
    """The whole batch's scratch at once, in one launch per tier of :data:`TIERS` and one for
    the rest, each on its own stream so that they overlap. A tier's carts (``work`` at least
    its floor, below the floor of the tier above) run heaviest first, one cart per block of
    the tier's threads (capped by ``heavy_threads`` and by what the compiled kernel allows,
    a power of two for the reduction): the longest carts start first and finish with many
    threads instead of holding a 64-thread block for the whole kernel. The rest, in cart
    order on ``light_threads``-thread blocks, fill the SMs as the tiers drain (one warp a
    cart leaves fewer threads idle on the smallest carts and fits twice the carts an SM)."""
    floor = TIERS[-1][0]
    heavy = np.flatnonzero(plan.work >= floor)
    order = heavy[np.argsort(-plan.work[heavy], kind="stable")]
    d_order = cuda.to_device(order.astype(np.int32) if order.size else np.zeros(1, np.int32))
    args = _kernel_args(d)
    launches = 0
    start = 0
    for tier_floor, tier_threads in TIERS:
        stop = start + int(np.count_nonzero(plan.work[order[start:]] >= tier_floor))
        if stop > start:
            shared = min(tier_threads, heavy_threads)
            kernel = _get_kernel(d, shared, INDEXED)
            call = (np.int64(start), np.int64(0), d_order, d["work"], np.int64(0), *args)
            kernel = _specialized(kernel, call, timings, f"tier_{tier_floor}")
            threads = _block_threads(kernel, shared)
            timings[f"tier_{tier_floor}_carts"] = stop - start
            timings[f"tier_{tier_floor}_threads"] = threads
            kernel[stop - start, threads, cuda.stream()](*call)
            launches += 1
        start = stop
    call = (np.int64(0), np.int64(0), d_order, d["work"], np.int64(floor), *args)
    light = _specialized(_get_kernel(d, THREADS, LIGHT), call, timings, "light")
    threads = SIMULATOR_THREADS if simulator_enabled() else light_threads
    light[plan.method.size, threads, cuda.stream()](*call)
    return launches + 1


def _specialized(kernel, call: tuple, timings: dict, name: str):
    """``kernel`` compiled for ``call``'s types (the simulator's as it is); its registers and
    local memory a thread go to ``timings`` (spills show as local bytes)."""
    if simulator_enabled():
        return kernel
    spec = kernel.specialize(*call)
    timings[f"{name}_regs"] = spec.get_regs_per_thread()
    timings[f"{name}_local_bytes"] = spec.get_local_mem_per_thread()
    return spec


def _block_threads(kernel, wanted: int) -> int:
    """``wanted`` or the largest power of two the compiled kernel can launch (registers)."""
    if simulator_enabled():
        return SIMULATOR_THREADS
    limit = kernel.get_max_threads_per_block()
    threads = wanted
    while threads > limit and threads > 32:
        threads //= 2
    return threads


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
        np.int64(0),
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
