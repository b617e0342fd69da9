"""Exact merchant-by-merchant subset DP on the GPU (numba-cuda); CPU twin in
:mod:`gpu_engine.solvers.dp.cpu` (``merchant_dp``).

Kernels and their thread-to-data mapping:

* ``_cost_tables``: one thread per (merchant, compressed subset of its lines), grid-stride over
  the concatenated tables; it sums the subset's goods and units and prices them with the njit
  pricing routine called as a device function.
* ``_layer``: one merchant's layer; one thread per line set ``S`` (grid-stride over 2^k). The
  thread enumerates the submasks ``T`` of ``S & A_m`` (and their compressed twins, which step
  in lockstep: submask order is preserved by compression) and writes
  ``h_next[S] = min h_prev[S - T] + cost_m[T]`` and the chosen ``T`` for the backtrack.
  Layers read one buffer and write the other, so threads never race.
* ``_backtrack``: a single thread walks the layers back from the full set.
"""

from __future__ import annotations

import time

import numpy as np
from numba import cuda, int64

from gpu_engine.device import gpu_name, simulator_enabled
from gpu_engine.pricing import device_merchant_cost, device_pricing_variant
from gpu_engine.problem import CapacityError, CartProblem
from gpu_engine.solvers.dp import ops as dp_ops
from gpu_engine.solvers.dp.inputs import MerchantDPInputs, expand_choice

INF = np.int64(dp_ops.INF)
# The per-state step, shared with the CPU twin (compiled lazily: no CUDA at import).
_compress = cuda.jit(device=True)(dp_ops.compress)
_best_split = cuda.jit(device=True)(dp_ops.best_split)
SIMULATOR_MEMORY = 64 << 20
# Leave room for other kernels and the CUDA context on a shared card.
DEVICE_MEMORY_FRACTION = 0.6

_kernels: dict[str, object] = {}


def gpu_memory_limit() -> int:
    if simulator_enabled():
        return SIMULATOR_MEMORY
    free, _total = cuda.current_context().get_memory_info()
    return int(free * DEVICE_MEMORY_FRACTION)


def _build():
    price = device_merchant_cost()

    @cuda.jit
    def cost_tables(
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
            out[e] = price(sub, unit, base[m], extra[m], free_over[m], dmin[m], dbp[m])

    @cuda.jit
    def layer(size, m, mask_m, n_lines, lines, cost, h_prev, h_next, pick):
        start = cuda.grid(1)
        stride = cuda.gridsize(1)
        for s in range(start, size, stride):
            x = s & mask_m
            best, best_t = _best_split(s, x, _compress(x, m, n_lines, lines), h_prev, cost)
            h_next[s] = best
            pick[m, s] = best_t

    @cuda.jit
    def backtrack(full, n_merch, n_lines, lines, pick, h_final, out_pick, out_total):
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

    return cost_tables, layer, backtrack


def _get_kernels():
    key = device_pricing_variant()
    if key not in _kernels:
        _kernels[key] = _build()
    return _kernels[key]


def _launch_shape(n: int) -> tuple[int, int]:
    if simulator_enabled():
        return 2, 32
    threads = 256
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    return max(1, min(sms * 8, -(-n // threads))), threads


def run_merchant_gpu(
    problem: CartProblem, inputs: MerchantDPInputs, at: float | None = None
) -> tuple[int, np.ndarray, str] | None:
    """(total, merchant per line, device name) of the exact merchant DP on the GPU; with a
    deadline ``at`` (a ``time.perf_counter()`` value) it waits for each layer and stops
    between layers once the deadline has passed (None)."""
    needed = inputs.memory_bytes() + (8 << inputs.k)
    limit = gpu_memory_limit()
    if needed > limit:
        raise CapacityError(
            "items", needed, f"GPU subset DP needs {needed} bytes, more than its limit {limit}"
        )
    cost_tables, layer, backtrack = _get_kernels()
    n_merch = int(inputs.merchants.size)
    size = 1 << inputs.k
    table_off = np.zeros(n_merch + 1, dtype=np.int64)
    table_off[1:] = np.cumsum(1 << inputs.n_lines.astype(np.int64))
    d_lines = cuda.to_device(inputs.lines)
    d_n_lines = cuda.to_device(inputs.n_lines)
    d_cost = cuda.device_array(int(table_off[-1]), dtype=np.int64)
    blocks, threads = _launch_shape(int(table_off[-1]))
    cost_tables[blocks, threads](
        cuda.to_device(table_off),
        np.int64(n_merch),
        d_n_lines,
        cuda.to_device(inputs.amount),
        cuda.to_device(inputs.units),
        cuda.to_device(inputs.sub0),
        cuda.to_device(inputs.units0),
        *(cuda.to_device(p) for p in inputs.params),
        d_cost,
    )
    h = np.full(size, INF, dtype=np.int64)
    h[0] = 0
    h_prev = cuda.to_device(h)
    h_next = cuda.device_array(size, dtype=np.int64)
    pick = cuda.device_array((n_merch, size), dtype=inputs.pick_dtype())
    blocks, threads = _launch_shape(size)
    for m in range(n_merch):
        lo, hi = int(table_off[m]), int(table_off[m + 1])
        layer[blocks, threads](
            np.int64(size),
            np.int64(m),
            np.int64(inputs.mask[m]),
            d_n_lines,
            d_lines,
            d_cost[lo:hi],
            h_prev,
            h_next,
            pick,
        )
        h_prev, h_next = h_next, h_prev
        if at is not None:
            cuda.synchronize()
            if time.perf_counter() >= at:
                return None
    out_pick = cuda.device_array(max(1, n_merch), dtype=np.int64)
    out_total = cuda.device_array(1, dtype=np.int64)
    backtrack[1, 1](
        np.int64(size - 1), np.int64(n_merch), d_n_lines, d_lines, pick, h_prev, out_pick, out_total
    )
    picks = out_pick.copy_to_host()
    total = int(out_total.copy_to_host()[0])
    free_choice = np.full(inputs.k, -1, dtype=np.int64)
    for m in range(n_merch):
        for b in range(int(inputs.n_lines[m])):
            if (int(picks[m]) >> b) & 1:
                free_choice[inputs.lines[m, b]] = m
    return total, expand_choice(problem, inputs, free_choice), gpu_name()
