"""Exact merchant-by-merchant subset DP on the GPU (numba-cuda); CPU twin in
:mod:`gpu_engine.solvers.dp.cpu` (``merchant_dp``).

Kernels and their thread-to-data mapping:

* ``_cost_tables``: one thread per (merchant, compressed subset of its lines), grid-stride over
  the concatenated tables; it sums the subset's goods and units and prices them with the njit
  pricing routine called as a device function.
* ``_prepare``: one thread per (merchant, half of a thread index) and per DP state; it
  deposits the half's bits into the merchant's ``deposit_order`` positions, so that thread
  ``i`` of layer ``m`` finds its line set as ``low[m, i & (2^L - 1)] | high[m, i >> L]``
  (``L = k // 2``; two lookups instead of a ``k``-step deposit per state, a bijection of
  ``[0, 2^k)`` per merchant), and sets the first layer's table (0 for the empty set, else INF).
* ``_layers``: every merchant's layer in one cooperative launch (a grid sync between layers:
  at 60 layers, launching one kernel per layer from Python cost more than the layers did);
  one thread per line set ``S`` (grid-stride over 2^k). The thread enumerates the submasks
  ``T`` of ``S & A_m`` (and their compressed twins, which step in lockstep: submask order is
  preserved by compression) and writes ``h_next[S] = min h_prev[S - T] + cost_m[T]`` and the
  chosen ``T`` for the backtrack. Layers read one buffer and write the other (by the layer's
  parity), so threads never race. Thread ``i`` takes the line set whose bits outside ``A_m``
  are ``i``'s low bits and whose bits in ``A_m`` are its high bits: the 32 threads of a warp
  share ``S & A_m``, so they walk the same number of submasks in step and read neighbouring
  ``h_prev`` entries.
* ``_backtrack``: a single thread walks the layers back from the full set.

Version 2 carts (:func:`run_owner_gpu`) take the same ``prepare``/``layers``/``backtrack``
kernels (:func:`run_layers`) over one layer per merchant (owner); their cost tables (an owner's
cheapest split of each line set over its nodes) are built on the host and copied, so
``_cost_tables`` serves version 1 only.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numba import cuda, int64

from gpu_engine.cuda_ops.variants import cached_kernel, source_tag, variant_name
from gpu_engine.device import gpu_name, simulator_enabled
from gpu_engine.pricing import device_merchant_cost, device_pricing_variant
from gpu_engine.problem import CapacityError, CartProblem
from gpu_engine.solvers.dp import ops as dp_ops
from gpu_engine.solvers.dp.inputs import MerchantDPInputs, expand_choice
from gpu_engine.solvers.dp.owner_inputs import OwnerDPInputs

INF = np.int64(dp_ops.INF)
# The per-state step, shared with the CPU twin (compiled lazily: no CUDA at import).
_compress = cuda.jit(device=True)(dp_ops.compress)
_best_split = cuda.jit(device=True)(dp_ops.best_split)
SIMULATOR_MEMORY = 64 << 20
# Leave room for other kernels and the CUDA context on a shared card.
DEVICE_MEMORY_FRACTION = 0.6

_kernels: dict[str, object] = {}
# Most blocks of the layers kernel resident at once, per argument dtypes (one context).
_cooperative_blocks: dict[tuple[object, ...], int] = {}
# With a deadline, layers run this many per launch and the clock is read between launches.
LAYERS_PER_CHECK = 8


def gpu_memory_limit() -> int:
    if simulator_enabled():
        return SIMULATOR_MEMORY
    free, _total = cuda.current_context().get_memory_info()
    return int(free * DEVICE_MEMORY_FRACTION)


def _cost_tables_template(
    table_off,
    n_merch,
    n_lines,
    amount,
    units,
    sub0,
    units0,
    base,
    extra,
    free_over,
    dmin,
    dbp,
    out,
):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for e in range(start, table_off[n_merch], stride):
        lo = 0
        hi = n_merch
        while hi - lo > 1:  # the merchant whose table holds entry e
            mid = (lo + hi) // 2
            if table_off[mid] <= e:
                lo = mid
            else:
                hi = mid
        m = lo
        t = e - table_off[m]
        sub = sub0[m]
        unit = units0[m]
        for b in range(n_lines[m]):
            if (t >> b) & 1:
                sub += amount[m, b]
                unit += units[m, b]
        out[e] = _price(sub, unit, base[m], extra[m], free_over[m], dmin[m], dbp[m])


@cuda.jit(cache=True)
def _prepare(order, k, low_bits, low, high, h_even):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    width = high.shape[1]
    for e in range(start, order.shape[0] * width, stride):
        m = e // width
        v = e - m * width
        if v < low.shape[1]:
            out = int64(0)
            for b in range(low_bits):
                out |= ((v >> b) & 1) << order[m, b]
            low[m, v] = out
        out = int64(0)
        for b in range(k - low_bits):
            out |= ((v >> b) & 1) << order[m, low_bits + b]
        high[m, v] = out
    for s in range(start, h_even.size, stride):
        h_even[s] = 0 if s == 0 else INF


@cuda.jit(cache=True)
def _layers(
    m_begin,
    m_end,
    masks,
    n_lines,
    lines,
    table_off,
    cost,
    low,
    high,
    low_bits,
    h_even,
    h_odd,
    pick,
):
    grid = cuda.cg.this_grid()
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    low_mask = (int64(1) << low_bits) - 1
    for m in range(m_begin, m_end):
        # Layer m reads layer m - 1's buffer: even layers read h_even and write h_odd.
        h_prev, h_next = (h_even, h_odd) if m % 2 == 0 else (h_odd, h_even)
        cost_m = cost[table_off[m] : table_off[m + 1]]
        mask_m = masks[m]
        for i in range(start, h_even.size, stride):
            s = low[m, i & low_mask] | high[m, i >> low_bits]
            x = s & mask_m
            best, best_t = _best_split(s, x, _compress(x, m, n_lines, lines), h_prev, cost_m)
            h_next[s] = best
            pick[m, s] = best_t
        grid.sync()


@cuda.jit(cache=True)
def _backtrack(full, n_merch, n_lines, lines, pick, h_final, out_pick, out_total):
    if cuda.grid(1) != 0:
        return
    s = full
    out_total[0] = h_final[full]
    for m in range(n_merch - 1, -1, -1):
        tc = int64(pick[m, s])
        out_pick[m] = tc
        for b in range(n_lines[m]):
            if (tc >> b) & 1:
                s ^= int64(1) << lines[m, b]


# The cost-table template's pricing routine, replaced in every variant (never compiled as is).
_price: Any = None


def _build():
    """The kernels, the cost tables' variant for the current pricing form cached on disk by
    numba (:mod:`gpu_engine.cuda_ops.variants`); the others are plain cached kernels."""
    parts = (
        device_pricing_variant(),
        source_tag("gpu_engine.solvers.dp.cuda", "gpu_engine.pricing"),
    )
    cost_tables = cached_kernel(
        _cost_tables_template,
        name=variant_name("dp_cost_tables", parts),
        replaced={"_price": device_merchant_cost()},
        jit=cuda.jit,
    )
    return cost_tables, _prepare, _layers, _backtrack


def _get_kernels():
    key = device_pricing_variant()
    if key not in _kernels:
        _kernels[key] = _build()
    return _kernels[key]


def deposit_order(k: int, mask: np.ndarray) -> np.ndarray:
    """Per merchant, the bit positions of a line set in the order thread indices fill them:
    those outside the merchant's mask first, then its own, each ascending (see ``_layers``)."""
    inside = (mask.astype(np.int64)[:, None] >> np.arange(k, dtype=np.int64)) & 1
    return np.argsort(inside, axis=1, kind="stable").astype(np.int64)


def _launch_shape(n: int) -> tuple[int, int]:
    if simulator_enabled():
        return 2, 32
    threads = 256
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    return max(1, min(sms * 8, -(-n // threads))), threads


def _cooperative_shape(kernel, args: tuple, size: int) -> tuple[int, int]:
    """Blocks and threads for the layers kernel, whose grid syncs between layers: no more
    blocks than can be resident at once (the simulator runs grid syncs in one block)."""
    if simulator_enabled():
        return 1, 32
    threads = 256
    full = (np.int64(0), np.int64(0), *args)
    # The device too: how many blocks fit depends on its multiprocessors.
    key = (cuda.get_current_device().id, *(str(getattr(a, "dtype", type(a))) for a in full))
    if key not in _cooperative_blocks:
        # compile() adds the overload the launch below then finds: compiled once.
        compiled = kernel.compile(tuple(kernel.typeof_pyval(a) for a in full))
        _cooperative_blocks[key] = int(compiled.max_cooperative_grid_blocks(threads))
    return max(1, min(_cooperative_blocks[key], -(-size // threads))), threads


def run_merchant_gpu(
    problem: CartProblem,
    inputs: MerchantDPInputs,
    at: float | None = None,
    *,
    pick_dtype: np.dtype | None = None,
) -> tuple[int, np.ndarray, str] | None:
    """(total, merchant per line, device name) of the exact merchant DP on the GPU: every
    layer in one cooperative launch; with a deadline ``at`` (a ``time.perf_counter()``
    value), ``LAYERS_PER_CHECK`` layers per launch, stopping between launches once the
    deadline has passed (None). ``pick_dtype``: the choice table's dtype, by default the
    narrowest that holds the merchants' line subsets (warm-up compiles both)."""
    needed = inputs.memory_bytes() + (8 << inputs.k)
    limit = gpu_memory_limit()
    if needed > limit:
        raise CapacityError(
            "items", needed, f"GPU subset DP needs {needed} bytes, more than its limit {limit}"
        )
    cost_tables = _get_kernels()[0]
    n_merch = int(inputs.merchants.size)
    table_off = np.zeros(n_merch + 1, dtype=np.int64)
    table_off[1:] = np.cumsum(1 << inputs.n_lines.astype(np.int64))
    d_lines = cuda.to_device(inputs.lines)
    d_n_lines = cuda.to_device(inputs.n_lines)
    d_cost = cuda.device_array(int(table_off[-1]), dtype=np.int64)
    blocks, threads = _launch_shape(int(table_off[-1]))
    d_table_off = cuda.to_device(table_off)
    cost_tables[blocks, threads](
        d_table_off,
        np.int64(n_merch),
        d_n_lines,
        cuda.to_device(inputs.amount),
        cuda.to_device(inputs.units),
        cuda.to_device(inputs.sub0),
        cuda.to_device(inputs.units0),
        *(cuda.to_device(p) for p in inputs.params),
        d_cost,
    )
    done = run_layers(
        inputs.k,
        inputs.mask,
        d_n_lines,
        d_lines,
        d_table_off,
        d_cost,
        at,
        pick_dtype or inputs.pick_dtype(),
    )
    if done is None:
        return None
    total, picks = done
    free_choice = np.full(inputs.k, -1, dtype=np.int64)
    for m in range(n_merch):
        for b in range(int(inputs.n_lines[m])):
            if (int(picks[m]) >> b) & 1:
                free_choice[inputs.lines[m, b]] = m
    return total, expand_choice(problem, inputs, free_choice), gpu_name()


def run_layers(
    k: int,
    mask: np.ndarray,
    d_n_lines,
    d_lines,
    d_table_off,
    d_cost,
    at: float | None,
    pick_dtype: np.dtype,
) -> tuple[int, np.ndarray] | None:
    """The DP's layers over the cost tables already on the device (``d_cost`` at
    ``d_table_off``, one layer per entry of ``mask``): (``h`` of the full line set, each
    layer's chosen compressed subset), or None once the deadline ``at`` passed between
    launches."""
    _cost_tables, prepare, layers, backtrack = _get_kernels()
    n_merch = int(mask.size)
    size = 1 << k
    low_bits = k // 2
    d_low = cuda.device_array((n_merch, 1 << low_bits), dtype=np.int64)
    d_high = cuda.device_array((n_merch, 1 << (k - low_bits)), dtype=np.int64)
    h_even = cuda.device_array(size, dtype=np.int64)
    h_odd = cuda.device_array(size, dtype=np.int64)
    blocks, threads = _launch_shape(max(size, n_merch << (k - low_bits)))
    prepare[blocks, threads](
        cuda.to_device(deposit_order(k, mask)),
        np.int64(k),
        np.int64(low_bits),
        d_low,
        d_high,
        h_even,
    )
    pick = cuda.device_array((n_merch, size), dtype=pick_dtype)
    args = (
        cuda.to_device(mask.astype(np.int64)),
        d_n_lines,
        d_lines,
        d_table_off,
        d_cost,
        d_low,
        d_high,
        np.int64(low_bits),
        h_even,
        h_odd,
        pick,
    )
    blocks, threads = _cooperative_shape(layers, args, size)
    # Without a deadline one launch runs every layer; with one, a few layers per launch and
    # the clock read between launches.
    step = n_merch if at is None else LAYERS_PER_CHECK
    for m_begin in range(0, n_merch, max(1, step)):
        m_end = min(n_merch, m_begin + step)
        layers[blocks, threads](np.int64(m_begin), np.int64(m_end), *args)
        if at is not None and m_end < n_merch:  # a finished DP is kept, late or not
            cuda.synchronize()
            if time.perf_counter() >= at:
                return None
    h_prev = h_even if n_merch % 2 == 0 else h_odd
    out_pick = cuda.device_array(max(1, n_merch), dtype=np.int64)
    out_total = cuda.device_array(1, dtype=np.int64)
    backtrack[1, 1](
        np.int64(size - 1), np.int64(n_merch), d_n_lines, d_lines, pick, h_prev, out_pick, out_total
    )
    return int(out_total.copy_to_host()[0]), out_pick.copy_to_host()


def run_owner_gpu(
    inputs: OwnerDPInputs, at: float | None = None, *, pick_dtype: np.dtype | None = None
) -> tuple[int, list[int], str] | None:
    """Version 2: (DP total of the layer owners, each layer's chosen table entry, device name)
    of the exact owner DP, over the cost tables built on the host (every owner's exact cost per
    line set, minimised over its node splits: :mod:`gpu_engine.solvers.dp.owner_inputs`); the
    layers are :func:`run_layers`, as for version 1. None once the deadline ``at`` passed."""
    needed = inputs.memory_bytes() + (8 << inputs.k)
    limit = gpu_memory_limit()
    if needed > limit:
        raise CapacityError(
            "items", needed, f"GPU subset DP needs {needed} bytes, more than its limit {limit}"
        )
    n_layers = inputs.n_layers
    if n_layers == 0:  # every line bound to one owner: the constants are the answer
        return 0, [], gpu_name()
    done = run_layers(
        inputs.k,
        inputs.mask,
        cuda.to_device(inputs.n_lines),
        cuda.to_device(inputs.lines),
        cuda.to_device(inputs.table_off[: n_layers + 1]),
        cuda.to_device(inputs.cost[: int(inputs.table_off[n_layers])]),
        at,
        pick_dtype or inputs.pick_dtype(),
    )
    if done is None:
        return None
    total, picks = done
    return total, [int(p) for p in picks[:n_layers]], gpu_name()
