"""Exact full search on the GPU (numba-cuda): every assignment is priced.

Numbering: :mod:`gpu_engine.layout` (mixed radix, innermost line fastest). A *row* is one choice
of every free line but the last (or, in pair mode, the last two); row ``r``'s assignments are
``r * r_in + j`` with ``r_in`` the row's size (:func:`row_size`).

Thread-to-data mapping: rows are cut into chunks of ``rows_per_chunk``; thread ``g`` (global
id) takes chunks ``g, g + G, g + 2G, ...`` (grid-stride, G = threads in the grid). For a chunk
it decodes the first row once (int64 div/mod), builds the per-merchant state (subtotal, units,
cost) in thread-local memory, then walks the chunk's rows like an odometer: moving to the next
row changes one line most of the time (two merchants re-priced). Each of the row's ``r_in``
assignments is priced in O(1): with one row line, ``total - cost[m] + merchant_cost(state[m] +
line)``; in pair mode (the default when possible) ``total + delta_a + delta_b`` from deltas
priced once per row, or one joint pricing when both lines pick the same merchant.
The problem (offers, amounts, merchant rules) is copied into shared memory by each block.
Each thread keeps its minimum (total, index); a warp-shuffle reduction (or, where shuffles are
unavailable such as the CUDA simulator, a shared-memory tree) and a block reduction leave one
candidate per block; the host takes the minimum of those (lowest index on ties) and decodes it.

The state is int32 when the host proves every subtotal, unit count and cost of the cart fits
(``layout.max_money() < 2**31``), int64 otherwise; totals are always int64.
"""

from __future__ import annotations

import math
import threading
import time
import types
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import cuda, int32, int64
from numba.core.errors import NumbaError

from gpu_engine.budget import check_budget, refuse_if_far_over
from gpu_engine.cuda_ops.reduce import block_min_shuffle, group_min_in
from gpu_engine.cuda_ops.variants import cached_kernel, source_tag, variant_name
from gpu_engine.device import gpu_name, simulator_enabled
from gpu_engine.layout import FullSearchLayout, full_search_layout
from gpu_engine.planning import rates
from gpu_engine.pricing import device_merchant_cost, device_pricing_fallback, device_pricing_variant
from gpu_engine.problem import CapacityError, CartProblem
from gpu_engine.results import make_solution
from gpu_engine.solution import Solution
from gpu_engine.solvers.full import ops as full_ops
from gpu_engine.solvers.full.cuda_parcels import launch_parcels, parcel_kernel, search_rate
from gpu_engine.solvers.full.transfer import DeviceProblem, device_parcel_problem, device_problem

MAX_LINES = 64
MAX_FLAT = 1024
# Pair mode keeps one delta per choice of the last line in thread-local memory.
PAIR_MAX_B = 64
MERCHANT_BUCKETS = (32, 64, 128, 256)
LIMITS = (MAX_LINES, MAX_FLAT, PAIR_MAX_B)
INT64_MAX = np.iinfo(np.int64).max
INT32_SAFE = 2**31 - 1
# A launch is sized for about this long, so a budget is honoured to within one launch.
SLICE_SECONDS = 0.1
RATE_MIN_COMPLEXITY = 1_000_000_000

# numba kernels (untyped). One serves every device: numba compiles per compute capability and
# loads the code into each context that launches it. The lock only guards building one, so
# threads on several GPUs (search_rows_multi) never wait for each other to launch.
_kernels: dict[tuple, Any] = {}
_kernels_lock = threading.Lock()


@dataclass(frozen=True)
class LaunchConfig:
    """Launch knobs; None picks the default (the simulator gets a tiny grid)."""

    threads: int | None = None
    blocks: int | None = None
    rows_per_chunk: int | None = None
    int32: bool | None = None
    shuffle: bool | None = None
    pair: bool | None = None
    max_registers: int | None = None


def _on_device(fn, price):
    """``fn`` of :mod:`gpu_engine.solvers.full.ops` as a CUDA device function whose
    ``merchant_cost`` is ``price`` (the form this numba-cuda calls, see
    :func:`gpu_engine.pricing.device_merchant_cost`)."""
    rebound = types.FunctionType(
        fn.__code__, {**fn.__globals__, "merchant_cost": price}, fn.__name__, fn.__defaults__
    )
    return cuda.jit(device=True)(rebound)


def _full_kernel_template(
    row_lo,
    row_hi,
    rows_per_chunk,
    n_lines,
    radix,
    offsets,
    cand,
    amount,
    qty,
    n_merchants,
    base,
    extra,
    free_over,
    dmin,
    dbp,
    sub0,
    units0,
    out_total,
    out_index,
):
    tid = cuda.threadIdx.x
    nthreads = cuda.blockDim.x
    s_radix = cuda.shared.array(MAX_LINES, int64)
    s_off = cuda.shared.array(MAX_LINES, int32)
    s_qty = cuda.shared.array(MAX_LINES, _ACC)
    s_cand = cuda.shared.array(MAX_FLAT, int32)
    s_amount = cuda.shared.array(MAX_FLAT, _ACC)
    s_base = cuda.shared.array(_MAX_M, _ACC)
    s_extra = cuda.shared.array(_MAX_M, _ACC)
    s_free = cuda.shared.array(_MAX_M, _ACC)
    s_dmin = cuda.shared.array(_MAX_M, _ACC)
    s_dbp = cuda.shared.array(_MAX_M, _ACC)
    for i in range(tid, n_lines, nthreads):
        s_radix[i] = radix[i]
        s_off[i] = offsets[i]
        s_qty[i] = qty[i]
    for i in range(tid, offsets[n_lines], nthreads):
        s_cand[i] = cand[i]
        s_amount[i] = amount[i]
    for m in range(tid, n_merchants, nthreads):
        s_base[m] = base[m]
        s_extra[m] = extra[m]
        s_free[m] = free_over[m]
        s_dmin[m] = dmin[m]
        s_dbp[m] = dbp[m]
    cuda.syncthreads()

    sub = cuda.local.array(_MAX_M, _ACC)
    units = cuda.local.array(_MAX_M, _ACC)
    cost = cuda.local.array(_MAX_M, _ACC)
    digits = cuda.local.array(MAX_LINES, int32)
    delta_b = cuda.local.array(PAIR_MAX_B, int64)
    # The last line (b) and, in _PAIR mode, the one before it (a) are priced per row; the
    # lines before them (the prefix) form the row number.
    lb = n_lines - 1
    la = n_lines - 2
    prefix = la if _PAIR else lb
    r_b = s_radix[lb]
    r_a = s_radix[la] if _PAIR else 1
    best_t = int64(INT64_MAX)
    best_i = int64(-1)
    n_chunks = (row_hi - row_lo + rows_per_chunk - 1) // rows_per_chunk
    chunk = int64(cuda.blockIdx.x) * nthreads + tid
    stride = int64(cuda.gridDim.x) * nthreads
    while chunk < n_chunks:
        row = row_lo + chunk * rows_per_chunk
        row_end = min(row + rows_per_chunk, row_hi)
        _decode_row(row, prefix, s_radix, digits)
        total = int64(0)
        total += _row_state(
            prefix, digits, s_off, s_cand, s_amount, s_qty, n_merchants, sub0, units0,
            sub, units, cost, s_base, s_extra, s_free, s_dmin, s_dbp,
        )  # fmt: skip
        while True:
            if _PAIR:
                best_t, best_i = _row_pair(
                    row,
                    total,
                    la,
                    lb,
                    r_a,
                    r_b,
                    s_off,
                    s_cand,
                    s_amount,
                    s_qty,
                    sub,
                    units,
                    cost,
                    s_base,
                    s_extra,
                    s_free,
                    s_dmin,
                    s_dbp,
                    delta_b,
                    best_t,
                    best_i,
                )
            else:
                best_t, best_i = _row_single(
                    row, total, lb, 0, r_b, r_b, s_off, s_cand, s_amount, s_qty,
                    sub, units, cost, s_base, s_extra, s_free, s_dmin, s_dbp, best_t, best_i,
                )  # fmt: skip
            row += 1
            if row >= row_end:
                break
            total += _next_row(
                prefix, digits, s_radix, s_off, s_cand, s_amount, s_qty, sub, units, cost,
                s_base, s_extra, s_free, s_dmin, s_dbp,
            )  # fmt: skip
        chunk += stride

    # One reduction for every kernel (gpu_engine.cuda_ops.reduce); the path is fixed when
    # the kernel is built: shuffles on a device, shared memory in the simulator.
    if _SHUFFLE:
        w_total = cuda.shared.array(32, int64)
        w_index = cuda.shared.array(32, int64)
        best_t, best_i = block_min_shuffle(best_t, best_i, w_total, w_index)
    else:
        b_total = cuda.shared.array(1024, int64)
        b_index = cuda.shared.array(1024, int64)
        best_t, best_i = group_min_in(best_t, best_i, nthreads, b_total, b_index)
    if tid == 0:
        out_total[cuda.blockIdx.x] = best_t
        out_index[cuda.blockIdx.x] = best_i


# The template's globals that every variant replaces (compile-time constants and the device
# functions bound to the pricing form this numba-cuda calls); these values are never compiled.
_ACC = int64
_MAX_M = 1
_PAIR = False
_SHUFFLE = False
_decode_row: Any = None
_row_state: Any = None
_next_row: Any = None
_row_single: Any = None
_row_pair: Any = None
# The modules a variant's code comes from: a change to any of them names new variants.
_SOURCES = (
    "gpu_engine.solvers.full.cuda",
    "gpu_engine.solvers.full.ops",
    "gpu_engine.pricing",
    "gpu_engine.cuda_ops.reduce",
)


def _build_kernel(
    max_m: int, use_int32: bool, use_shuffle: bool, pair: bool, max_registers: int | None
):
    """The variant of :func:`_full_kernel_template`, cached on disk by numba
    (:mod:`gpu_engine.cuda_ops.variants`)."""
    price = device_merchant_cost()
    replaced = {
        "_ACC": int32 if use_int32 else int64,
        "_MAX_M": max_m,
        "_PAIR": pair,
        "_SHUFFLE": use_shuffle,
        **{
            f"_{fn.__name__}": _on_device(fn, price)
            for fn in (
                full_ops.decode_row,
                full_ops.row_state,
                full_ops.next_row,
                full_ops.row_single,
                full_ops.row_pair,
            )
        },
    }
    parts = (
        f"m{max_m}",
        "i32" if use_int32 else "i64",
        "shfl" if use_shuffle else "smem",
        "pair" if pair else "single",
        f"r{max_registers or 0}",
        device_pricing_variant(),
        source_tag(*_SOURCES),
    )
    # The simulator's jit takes no max_registers; pass it only when a cap is asked for.
    return cached_kernel(
        _full_kernel_template,
        name=variant_name("full_kernel", parts),
        replaced=replaced,
        jit=cuda.jit,
        **({"max_registers": max_registers} if max_registers else {}),
    )


def _kernel(max_m: int, use_int32: bool, use_shuffle: bool, pair: bool, max_registers):
    key = (max_m, use_int32, use_shuffle, pair, max_registers or 0, device_pricing_variant())
    kernel = _kernels.get(key)
    if kernel is None:
        with _kernels_lock:
            if key not in _kernels:
                _kernels[key] = _build_kernel(max_m, use_int32, use_shuffle, pair, max_registers)
            kernel = _kernels[key]
    return kernel


def kernel_resources() -> list[dict]:
    """Registers, local and shared memory of each compiled full-search kernel variant."""
    rows = []
    for (max_m, use_int32, shuffle, pair, regs, pricing), kernel in sorted(_kernels.items()):
        rows.append(
            {
                "solver": f"m{max_m}{'-int32' if use_int32 else '-int64'}"
                f"{'-shfl' if shuffle else '-smem'}{'-pair' if pair else '-single'}"
                f"{f'-maxreg{regs}' if regs else ''}",
                "pricing": pricing,
                "regs": _first(kernel.get_regs_per_thread()),
                "local_bytes": _first(kernel.get_local_mem_per_thread()),
                "shared_bytes": _first(kernel.get_shared_mem_per_block()),
            }
        )
    return rows


def _first(value):
    # numba returns {signature: value} for a dispatcher compiled for several signatures.
    if isinstance(value, dict):
        return next(iter(value.values()), None)
    return value


def use_pair(layout: FullSearchLayout, requested: bool | None) -> bool:
    possible = layout.n_free >= 2 and int(layout.radix[-1]) <= PAIR_MAX_B
    if requested and not possible:
        raise CapacityError("items", layout.n_free, "pair mode needs two free lines")
    return possible if requested is None else requested


def row_size(layout: FullSearchLayout, config: LaunchConfig | None = None) -> int:
    """Assignments per row: the last line's choices, times the line before's in pair mode."""
    pair = use_pair(layout, (config or LaunchConfig()).pair)
    return int(layout.radix[-1]) * (int(layout.radix[-2]) if pair else 1)


def _prepare(layout: FullSearchLayout, config: LaunchConfig) -> DeviceProblem:
    use_int32 = config.int32
    if layout.n_free > MAX_LINES:
        raise CapacityError("items", layout.n_free, f"GPU full search takes <= {MAX_LINES} lines")
    flat = int(layout.radix.sum())
    if flat > MAX_FLAT:
        raise CapacityError("offers", flat, f"GPU full search takes <= {MAX_FLAT} offers")
    n_merchants = int(layout.merchants.size)
    max_m = next((b for b in MERCHANT_BUCKETS if b >= n_merchants), None)
    if max_m is None:
        raise CapacityError(
            "merchants", n_merchants, f"GPU full search takes <= {MERCHANT_BUCKETS[-1]}"
        )
    fits32 = layout.max_money() < INT32_SAFE
    use_int32 = fits32 if use_int32 is None else use_int32
    if use_int32 and not fits32:
        raise CapacityError("items", layout.max_money(), "cart totals do not fit int32")
    # Version 2 carts: a column's merchant is one of the columns', so max_m bounds both.
    make = device_problem if layout.parcels is None else device_parcel_problem
    return make(
        layout,
        max_m=max_m,
        use_int32=use_int32,
        pair=use_pair(layout, config.pair),
        r_in=row_size(layout, config),
    )


def _grid(dev: DeviceProblem, n_rows: int, config: LaunchConfig) -> tuple[int, int, int]:
    sim = simulator_enabled()
    threads = config.threads or (32 if sim else 256)
    if config.blocks is not None:
        blocks = config.blocks
    elif sim:
        blocks = 2
    else:
        sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
        blocks = sms * max(1, 2048 // threads)
    total_threads = blocks * threads
    rows_per_chunk = config.rows_per_chunk or int(min(256, max(1, n_rows // (total_threads * 4))))
    chunks = -(-n_rows // rows_per_chunk)
    blocks = max(1, min(blocks, -(-chunks // threads)))
    return blocks, threads, rows_per_chunk


def _launch(dev, row_lo, row_hi, config, use_shuffle, out_total, out_index, offset):
    blocks, threads, rows_per_chunk = _grid(dev, row_hi - row_lo, config)
    if dev.parcels:
        outs = (out_total[offset : offset + blocks], out_index[offset : offset + blocks])
        kernel = parcel_kernel(dev, use_shuffle, config.max_registers, LIMITS)
        return launch_parcels(kernel, dev, row_lo, row_hi, (blocks, threads, rows_per_chunk), outs)
    kernel = _kernel(dev.max_m, dev.use_int32, use_shuffle, dev.pair, config.max_registers)
    radix, offsets, cand, amount, qty, base, extra, free_over, dmin, dbp, sub0, units0 = dev.arrays
    kernel[blocks, threads](
        np.int64(row_lo),
        np.int64(row_hi),
        np.int64(rows_per_chunk),
        np.int32(dev.n_lines),
        radix,
        offsets,
        cand,
        amount,
        qty,
        np.int32(dev.n_merchants),
        base,
        extra,
        free_over,
        dmin,
        dbp,
        sub0,
        units0,
        out_total[offset : offset + blocks],
        out_index[offset : offset + blocks],
    )
    return blocks


def search_rows(
    layout: FullSearchLayout,
    *,
    start_row: int = 0,
    stop_row: int | None = None,
    budget_ms: float | None = None,
    config: LaunchConfig | None = None,
) -> tuple[int, int, int]:
    """GPU full search over rows ``[start_row, stop_row)`` on the current device.

    Returns (best total, best assignment index, rows searched). With ``budget_ms`` the search
    stops between launches once the budget is spent."""
    config = config or LaunchConfig()
    t0 = time.perf_counter()
    dev = _prepare(layout, config)
    stop_row = dev.n_rows if stop_row is None else stop_row
    use_shuffle = (not simulator_enabled()) if config.shuffle is None else config.shuffle
    rows_per_launch = max(1, int(search_rate(layout) * SLICE_SECONDS) // dev.r_in)
    n_launches = max(1, -(-(stop_row - start_row) // rows_per_launch))
    max_blocks = _grid(dev, min(rows_per_launch, stop_row - start_row), config)[0]
    n_out = n_launches * max_blocks
    out = cuda.device_array(2 * n_out, dtype=np.int64)
    out_total, out_index = out[:n_out], out[n_out:]
    used = 0
    row = start_row
    while row < stop_row:
        hi = min(stop_row, row + rows_per_launch)
        pricing = device_pricing_variant()
        try:
            used += _launch(dev, row, hi, config, use_shuffle, out_total, out_index, used)
        except NumbaError:
            # This numba-cuda cannot call the njit dispatcher: compile its Python source. With
            # several GPUs another thread may have switched already: retry in the new form.
            if device_pricing_variant() == pricing and not device_pricing_fallback():
                raise
            continue
        row = hi
        if budget_ms is not None:
            cuda.synchronize()
            if (time.perf_counter() - t0) * 1e3 >= budget_ms:
                break
    host_out = out.copy_to_host()
    totals = host_out[:used]
    indexes = host_out[n_out : n_out + used]
    order = np.lexsort((indexes, totals))
    return int(totals[order[0]]), int(indexes[order[0]]), row - start_row


def search_rows_multi(
    layout: FullSearchLayout, device_ids: list[int], config: LaunchConfig | None = None
) -> tuple[int, int]:
    """Split the rows evenly over several GPUs of this host, one host thread each (rows cost
    the same, so even cuts balance the work). Each thread copies the problem to its own device
    and allocates its own outputs (:func:`search_rows`): nothing on a device is shared or kept
    between calls, and the only process-wide state, the compiled kernels, is read without a
    lock."""
    n_rows = layout.complexity // row_size(layout, config)
    cuts = np.linspace(0, n_rows, len(device_ids) + 1).astype(np.int64)
    results: list[tuple[int, int, int] | BaseException | None] = [None] * len(device_ids)

    def work(slot: int, device_id: int) -> None:
        try:
            with cuda.gpus[device_id]:
                results[slot] = search_rows(
                    layout, start_row=int(cuts[slot]), stop_row=int(cuts[slot + 1]), config=config
                )
        except BaseException as exc:  # re-raised in the caller's thread
            results[slot] = exc

    if simulator_enabled():
        # The simulator swaps module globals while a kernel runs: one host thread at a time.
        for slot, device_id in enumerate(device_ids):
            work(slot, device_id)
    else:
        threads = [threading.Thread(target=work, args=(s, d)) for s, d in enumerate(device_ids)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    done = []
    for r in results:
        if isinstance(r, BaseException):
            raise r
        assert r is not None, "every worker thread stores a result or its error"
        done.append((r[0], r[1]))
    return min(done)


def solve_gpu_full(
    problem: CartProblem,
    *,
    budget_ms: float | None = None,
    config: LaunchConfig | None = None,
    device_ids: list[int] | None = None,
) -> Solution:
    """Exact GPU full search (a budget makes it stop early, flagged not optimal). With several
    ``device_ids`` the rows are split over those GPUs. Refused up front (BudgetError) when the
    predicted time at the known rate is far over the budget."""
    budget_ms = check_budget(budget_ms)
    t0 = time.perf_counter()
    layout = full_search_layout(problem)
    refuse_if_far_over("gpu-full", layout.complexity / search_rate(layout) * 1e3, budget_ms)
    if layout.n_free == 0:
        choice = layout.fixed_choice
        from gpu_engine.pricing import total_of

        return _solution(problem, layout, choice, total_of(problem, choice), True, t0, 1, 1)
    r_in = row_size(layout, config)
    n_rows = layout.complexity // r_in
    if device_ids and len(device_ids) > 1:
        total, index = search_rows_multi(layout, device_ids, config)
        rows = n_rows
    else:
        total, index, rows = search_rows(layout, budget_ms=budget_ms, config=config)
    elapsed = time.perf_counter() - t0
    searched = rows * r_in
    if layout.parcels is None and rows == n_rows and searched >= RATE_MIN_COMPLEXITY:
        rates.record_gpu_full_rate(searched / elapsed)
    return _solution(
        problem, layout, layout.decode(index), total, rows == n_rows, t0, searched, n_rows
    )


def _solution(problem, layout, choice, total, optimal, t0, searched, n_rows) -> Solution:
    return make_solution(
        problem,
        choice,
        total=total,
        optimal=optimal,
        algorithm="gpu-full",
        device=gpu_name(),
        elapsed_ms=(time.perf_counter() - t0) * 1e3,
        stats={
            "searched": searched,
            "rows": n_rows,
            "pricing_device_function": device_pricing_variant(),
            "log10_complexity": math.log10(max(1, layout.complexity)),
        },
    )
