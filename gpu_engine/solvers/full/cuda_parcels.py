"""The full search's CUDA kernel for version 2 carts (parcels per fulfillment node).

Version 1's kernel (:mod:`gpu_engine.solvers.full.cuda`) with the per-merchant state split in
two, as :mod:`gpu_engine.solvers.full.parcel_ops` walks it: per column (a merchant's node) the
parcel's units, grams and fee, per merchant its subtotal, units, summed parcel fees and cost.
Same numbering, rows, chunks, grid-stride, single and pair modes and reductions; the launch
sizes are version 1's (``cuda._grid``). Thread-local arrays are bounded by the column bucket
``max_c``; the problem's lines, offers and column and merchant rules go to shared memory, the
weight tiers stay in global memory (read-only and small, they live in the cache). The state is
int32 where the host proved it fits (``layout.max_money()``), int64 otherwise; tiers, parcel
fees as formed and totals are int64.
"""

from __future__ import annotations

import threading
import types
from typing import Any

import numpy as np
from numba import cuda, int32, int64

from gpu_engine import pricing
from gpu_engine.cuda_ops.reduce import block_min_shuffle, group_min_in
from gpu_engine.cuda_ops.variants import cached_kernel, source_tag, variant_name
from gpu_engine.device import simulator_enabled
from gpu_engine.planning import rates
from gpu_engine.solvers.full import ops as full_ops
from gpu_engine.solvers.full import parcel_ops

INT64_MAX = 2**63 - 1
# The parcel kernel prices this many times fewer assignments a second than the recorded
# version 1 rate (H100: 70-90 against 203 G/s, both pair mode and int32 state).
PARCEL_SLOWDOWN = 2.5
_kernels: dict[tuple, Any] = {}
_kernels_lock = threading.Lock()


def _device_functions() -> dict[str, Any]:
    """:mod:`parcel_ops`' walkers as the kernel calls them: the njit dispatchers themselves, or,
    once this numba-cuda refused dispatchers (:func:`gpu_engine.pricing.device_pricing_variant`),
    their Python compiled by ``cuda.jit`` with every callee rebound to its ``cuda.jit`` form.
    The simulator takes the second form too: a CPU dispatcher cannot take its fake arrays."""
    names = ("row_state", "next_row", "row_single", "row_pair")
    if pricing.device_pricing_variant() == "njit" and not simulator_enabled():
        return {name: getattr(parcel_ops, name) for name in names}

    def on_device(dispatcher, **callees):
        fn = dispatcher.py_func
        rebound = types.FunctionType(
            fn.__code__, {**fn.__globals__, **callees}, fn.__name__, fn.__defaults__
        )
        return cuda.jit(device=True)(rebound)

    weight_fee = on_device(pricing.weight_fee)
    parcel_fee = on_device(pricing.parcel_fee, weight_fee=weight_fee)
    owner_cost = on_device(pricing.owner_cost, merchant_cost=pricing.device_merchant_cost())
    column_fee = on_device(parcel_ops.column_fee, parcel_fee=parcel_fee)
    shift_line = on_device(parcel_ops.shift_line, column_fee=column_fee, owner_cost=owner_cost)
    callees = {"column_fee": column_fee, "owner_cost": owner_cost, "shift_line": shift_line}
    return {name: on_device(getattr(parcel_ops, name), **callees) for name in names}


def _parcel_kernel_template(
    row_lo, row_hi, rows_per_chunk, n_lines, n_columns, n_owners,
    radix, offsets, cand, owner, amount, qty, lgrams, base, extra, free, dmin, dbp,
    sub0, units0, grams0, tier_up, tier_fee, tier_count, per_kg, out_total, out_index,
):  # fmt: skip
    tid = cuda.threadIdx.x
    nthreads = cuda.blockDim.x
    s_radix = cuda.shared.array(_MAX_LINES, int64)
    s_off = cuda.shared.array(_MAX_LINES, int32)
    s_qty = cuda.shared.array(_MAX_LINES, _ACC)
    s_lgrams = cuda.shared.array(_MAX_LINES, _ACC)
    s_cand = cuda.shared.array(_MAX_FLAT, int32)
    s_amount = cuda.shared.array(_MAX_FLAT, _ACC)
    s_owner = cuda.shared.array(_MAX_C, int32)
    s_base = cuda.shared.array(_MAX_C, _ACC)
    s_extra = cuda.shared.array(_MAX_C, _ACC)
    s_free = cuda.shared.array(_MAX_C, _ACC)
    s_dmin = cuda.shared.array(_MAX_C, _ACC)
    s_dbp = cuda.shared.array(_MAX_C, _ACC)
    for i in range(tid, n_lines, nthreads):
        s_radix[i] = radix[i]
        s_off[i] = offsets[i]
        s_qty[i] = qty[i]
        s_lgrams[i] = lgrams[i]
    for i in range(tid, offsets[n_lines], nthreads):
        s_cand[i] = cand[i]
        s_amount[i] = amount[i]
    for c in range(tid, n_columns, nthreads):
        s_owner[c] = owner[c]
        s_base[c] = base[c]
        s_extra[c] = extra[c]
    for o in range(tid, n_owners, nthreads):
        s_free[o] = free[o]
        s_dmin[o] = dmin[o]
        s_dbp[o] = dbp[o]
    cuda.syncthreads()

    units = cuda.local.array(_MAX_C, _ACC)
    grams = cuda.local.array(_MAX_C, _ACC)
    fee = cuda.local.array(_MAX_C, _ACC)
    osub = cuda.local.array(_MAX_C, _ACC)
    ounits = cuda.local.array(_MAX_C, _ACC)
    oparcels = cuda.local.array(_MAX_C, _ACC)
    ocost = cuda.local.array(_MAX_C, _ACC)
    digits = cuda.local.array(_MAX_LINES, int32)
    delta_b = cuda.local.array(_PAIR_MAX_B, int64)
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
            prefix, digits, s_off, s_cand, s_amount, s_qty, s_lgrams, n_columns, n_owners,
            s_owner, sub0, units0, grams0, units, grams, fee, osub, ounits, oparcels, ocost,
            s_base, s_extra, tier_up, tier_fee, tier_count, per_kg, s_free, s_dmin, s_dbp,
        )  # fmt: skip
        while True:
            if _PAIR:
                best_t, best_i = _row_pair(
                    row, total, la, lb, r_a, r_b, s_off, s_cand, s_amount, s_qty, s_lgrams,
                    s_owner, units, grams, fee, osub, ounits, oparcels, ocost,
                    s_base, s_extra, tier_up, tier_fee, tier_count, per_kg,
                    s_free, s_dmin, s_dbp, delta_b, best_t, best_i,
                )  # fmt: skip
            else:
                best_t, best_i = _row_single(
                    row, total, lb, 0, r_b, r_b, s_off, s_cand, s_amount, s_qty, s_lgrams,
                    s_owner, units, grams, fee, osub, ounits, oparcels, ocost,
                    s_base, s_extra, tier_up, tier_fee, tier_count, per_kg,
                    s_free, s_dmin, s_dbp, best_t, best_i,
                )  # fmt: skip
            row += 1
            if row >= row_end:
                break
            total += _next_row(
                prefix, digits, s_radix, s_off, s_cand, s_amount, s_qty, s_lgrams, s_owner,
                units, grams, fee, osub, ounits, oparcels, ocost,
                s_base, s_extra, tier_up, tier_fee, tier_count, per_kg, s_free, s_dmin, s_dbp,
            )  # fmt: skip
        chunk += stride

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
# functions in the form this numba-cuda calls); these values are never compiled.
_ACC = int64
_MAX_C = _MAX_LINES = _MAX_FLAT = _PAIR_MAX_B = 1
_PAIR = _SHUFFLE = False
_decode_row: Any = None
_row_state: Any = None
_next_row: Any = None
_row_single: Any = None
_row_pair: Any = None
# The modules a variant's code comes from: a change to any of them names new variants.
_SOURCES = (
    "gpu_engine.solvers.full.cuda_parcels",
    "gpu_engine.solvers.full.parcel_ops",
    "gpu_engine.solvers.full.ops",
    "gpu_engine.pricing",
    "gpu_engine.cuda_ops.reduce",
)


def build_parcel_kernel(
    max_c: int,
    use_int32: bool,
    use_shuffle: bool,
    pair: bool,
    max_registers: int | None,
    limits: tuple[int, int, int],
):
    """The kernel for ``max_c`` columns (and as many merchants at most); ``limits``: the
    bounds of lines, flat offers and the pair mode's last line (``cuda.MAX_LINES``,
    ``MAX_FLAT``, ``PAIR_MAX_B``). A variant of :func:`_parcel_kernel_template` that numba
    keeps on disk (:mod:`gpu_engine.cuda_ops.variants`)."""
    max_lines, max_flat, pair_max_b = limits
    fns = _device_functions()
    replaced = {
        "_ACC": int32 if use_int32 else int64,
        "_MAX_C": max_c,
        "_MAX_LINES": max_lines,
        "_MAX_FLAT": max_flat,
        "_PAIR_MAX_B": pair_max_b,
        "_PAIR": pair,
        "_SHUFFLE": use_shuffle,
        "_decode_row": cuda.jit(device=True)(full_ops.decode_row),
        **{f"_{name}": fn for name, fn in fns.items()},
    }
    parts = (
        f"c{max_c}",
        "i32" if use_int32 else "i64",
        "shfl" if use_shuffle else "smem",
        "pair" if pair else "single",
        f"r{max_registers or 0}",
        f"l{max_lines}_f{max_flat}_b{pair_max_b}",
        pricing.device_pricing_variant(),
        source_tag(*_SOURCES),
    )
    # The simulator's jit takes no max_registers; pass it only when a cap is asked for.
    return cached_kernel(
        _parcel_kernel_template,
        name=variant_name("parcel_kernel", parts),
        replaced=replaced,
        jit=cuda.jit,
        **({"max_registers": max_registers} if max_registers else {}),
    )


def search_rate(layout) -> float:
    """Assignments a second a full search of ``layout`` runs at on this GPU (the recorded
    rate, version 1's, slowed for a version 2 layout): it sizes launches and refusals."""
    return rates.gpu_full_rate() / (1 if layout.parcels is None else PARCEL_SLOWDOWN)


def parcel_kernel(dev, use_shuffle: bool, max_registers: int | None, limits: tuple[int, int, int]):
    """The built kernel for ``dev`` (a :class:`~gpu_engine.solvers.full.transfer.DeviceProblem`
    of a version 2 layout), these knobs and the current pricing form: built once, found without
    a lock, as version 1's."""
    knobs = (dev.max_m, dev.use_int32, use_shuffle, dev.pair, max_registers or 0)
    key = (*knobs, pricing.device_pricing_variant())
    kernel = _kernels.get(key)
    if kernel is None:
        with _kernels_lock:
            if key not in _kernels:
                _kernels[key] = build_parcel_kernel(*knobs, limits)
            kernel = _kernels[key]
    return kernel


def launch_parcels(kernel, dev, row_lo: int, row_hi: int, grid: tuple[int, int, int], outs):
    """Launch ``kernel`` over rows ``[row_lo, row_hi)`` with ``grid`` (blocks, threads, rows
    per chunk), one (total, index) per block into ``outs``; returns the blocks launched."""
    blocks, threads, rows_per_chunk = grid
    kernel[blocks, threads](
        np.int64(row_lo),
        np.int64(row_hi),
        np.int64(rows_per_chunk),
        np.int32(dev.n_lines),
        np.int32(dev.n_merchants),
        np.int32(dev.n_owners),
        *dev.arrays,
        *outs,
    )
    return blocks
