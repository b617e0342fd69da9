"""CPU (numba) kernels of the exact subset dynamic programs.

Line sets are bit masks over the cart's lines (bit i = line i). Two programs:

* **Relaxed partition DP**: ``g(T)`` = cheapest single merchant for the line set ``T``;
  ``f(S) = min over T in S (T holding S's lowest line) of g(T) + f(S - T)``, O(3^k). It may give
  one merchant two disjoint groups priced as two shipments, so its value is a *lower bound*; it
  is the optimum whenever its partition (merchants merged) prices at that bound.
* **Merchant-by-merchant DP** (always exact): ``h_m(S)`` = cheapest way for merchants 0..m to
  ship exactly the free lines ``S``; ``h_m(S) = min over T in S & A_m of h_{m-1}(S - T) +
  c_m(T)``, where ``A_m`` are the lines merchant m can serve and ``c_m`` includes the lines
  that only m sells (folded in). Only submasks of ``A_m`` are enumerated:
  sum_m 3^{a_m} 2^{k - a_m} steps, cheap for sparse carts.
"""

from __future__ import annotations

import numba
import numpy as np

from gpu_engine.pricing import merchant_cost
from gpu_engine.solvers.dp import ops as dp_ops

INF = np.int64(dp_ops.INF)


@numba.njit(cache=True)
def dp_inputs(quantity, price, line_ids):
    """Per-merchant line lists over the lines ``line_ids`` (bit j = line line_ids[j]).

    Returns ``mask`` int64[M], ``n_lines`` int32[M], ``lines`` int32[M, W] (bit positions),
    ``amount`` int64[M, W] (quantity * price) and ``units`` int64[M, W]."""
    n_merchants = price.shape[1]
    n_lines = np.zeros(n_merchants, dtype=np.int32)
    for j in range(line_ids.shape[0]):
        for m in range(n_merchants):
            if price[line_ids[j], m] >= 0:
                n_lines[m] += 1
    width = max(1, n_lines.max()) if n_merchants > 0 else 1
    mask = np.zeros(n_merchants, dtype=np.int64)
    lines = np.zeros((n_merchants, width), dtype=np.int32)
    amount = np.zeros((n_merchants, width), dtype=np.int64)
    units = np.zeros((n_merchants, width), dtype=np.int64)
    fill = np.zeros(n_merchants, dtype=np.int32)
    for j in range(line_ids.shape[0]):
        i = line_ids[j]
        for m in range(n_merchants):
            if price[i, m] >= 0:
                k = fill[m]
                lines[m, k] = j
                amount[m, k] = quantity[i] * price[i, m]
                units[m, k] = quantity[i]
                mask[m] |= np.int64(1) << j
                fill[m] = k + 1
    return mask, n_lines, lines, amount, units


@numba.njit(cache=True)
def subset_costs(m, n_lines, amount, units, sub0, units0, params, out_cost, out_mask, lines):
    """``out_cost[t]`` = merchant m's cost for the compressed subset t of its lines (bit b =
    its b-th line), the folded lines ``sub0``/``units0`` included; ``out_mask[t]`` = the line
    mask of t. Each subset extends the one without its lowest bit, so the whole table costs
    one addition and one pricing per subset."""
    base, extra, free_over, dmin, dbp = params
    a = n_lines[m]
    size = 1 << a
    sub = np.empty(size, dtype=np.int64)
    unit = np.empty(size, dtype=np.int64)
    sub[0] = sub0
    unit[0] = units0
    out_mask[0] = 0
    out_cost[0] = merchant_cost(sub0, units0, base[m], extra[m], free_over[m], dmin[m], dbp[m])
    for t in range(1, size):
        low = t & -t
        b = 0
        while (np.int64(1) << b) != low:
            b += 1
        prev = t ^ low
        sub[t] = sub[prev] + amount[m, b]
        unit[t] = unit[prev] + units[m, b]
        out_mask[t] = out_mask[prev] | (np.int64(1) << lines[m, b])
        out_cost[t] = merchant_cost(
            sub[t], unit[t], base[m], extra[m], free_over[m], dmin[m], dbp[m]
        )


@numba.njit(cache=True)
def relaxed_groups(k, mask, n_lines, lines, amount, units, params):
    """``g[T]`` = cheapest single merchant's cost for the line set T, and that merchant."""
    n_merchants = mask.shape[0]
    size = np.int64(1) << k
    g = np.full(size, INF, dtype=np.int64)
    g_merchant = np.full(size, -1, dtype=np.int32)
    max_a = n_lines.max()
    cost = np.empty(np.int64(1) << max_a, dtype=np.int64)
    tmask = np.empty(np.int64(1) << max_a, dtype=np.int64)
    for m in range(n_merchants):
        if n_lines[m] == 0:
            continue
        subset_costs(m, n_lines, amount, units, 0, 0, params, cost, tmask, lines)
        for t in range(1, np.int64(1) << n_lines[m]):
            if cost[t] < g[tmask[t]]:
                g[tmask[t]] = cost[t]
                g_merchant[tmask[t]] = m
    return g, g_merchant


@numba.njit(cache=True)
def relaxed_states(lo, hi, g, f, pick):
    """``f[s]`` and ``pick[s]`` for the line sets s in [lo, hi), ascending (``f[0]`` = 0 is
    the caller's): every f read is of a smaller set, so ranges run in order in slices."""
    for s in range(lo, hi):
        low = s & -s
        rest = s ^ low
        best = INF
        best_t = 0
        u = rest
        while True:
            t = u | low
            gt = g[t]
            if gt < INF:
                v = gt + f[s ^ t]
                if v < best:
                    best = v
                    best_t = t
            if u == 0:
                break
            u = (u - 1) & rest
        f[s] = best
        pick[s] = best_t


@numba.njit(cache=True)
def relaxed_backtrack(k, f, pick, g_merchant):
    """The relaxed optimum's group merchant per line (-1 everywhere when nothing is reachable)."""
    size = np.int64(1) << k
    choice = np.full(k, -1, dtype=np.int64)
    s = size - 1
    while s != 0 and f[size - 1] < INF:
        t = pick[s]
        for j in range(k):
            if (t >> j) & 1:
                choice[j] = g_merchant[t]
        s ^= t
    return choice


@numba.njit(cache=True)
def relaxed_tables(k):
    size = np.int64(1) << k
    f = np.empty(size, dtype=np.int64)
    pick = np.zeros(size, dtype=np.int64)
    f[0] = 0
    return f, pick


@numba.njit(cache=True)
def relaxed_partition_dp(k, mask, n_lines, lines, amount, units, params):
    """Lower bound ``f(all)`` and its partition: returns (bound, group merchant per line).

    Memory: 24 bytes per subset of the k lines. One call; the solver runs the same pieces in
    slices to check its deadline between them."""
    g, g_merchant = relaxed_groups(k, mask, n_lines, lines, amount, units, params)
    f, pick = relaxed_tables(k)
    relaxed_states(1, np.int64(1) << k, g, f, pick)
    return f[(np.int64(1) << k) - 1], relaxed_backtrack(k, f, pick, g_merchant)


_compress = numba.njit(cache=True)(dp_ops.compress)
_best_split = numba.njit(cache=True)(dp_ops.best_split)


@numba.njit(cache=True)
def merchant_states(m, hi, lo, am, n_lines, lines, h, cost, pick):
    """Merchant m's layer over the line sets s in [lo, hi), in decreasing s (see
    :mod:`gpu_engine.solvers.dp.ops`): slices from the top down keep every read on the
    previous layer."""
    for s in range(hi - 1, lo - 1, -1):
        x = s & am
        best, best_t = _best_split(s, x, _compress(x, m, n_lines, lines), h, cost)
        h[s] = best
        pick[m, s] = best_t


@numba.njit(cache=True)
def merchant_backtrack(k, n_lines, lines, pick):
    """The merchant per free line of the DP's optimum, from the layers' picks."""
    n_merchants = pick.shape[0]
    choice = np.full(k, -1, dtype=np.int64)
    s = (np.int64(1) << k) - 1
    for m in range(n_merchants - 1, -1, -1):
        tc = np.int64(pick[m, s])
        for b in range(n_lines[m]):
            if (tc >> b) & 1:
                choice[lines[m, b]] = m
                s ^= np.int64(1) << lines[m, b]
    return choice


@numba.njit(cache=True)
def merchant_tables(k, n_lines):
    """The DP's layer ``h`` (h[0] = 0) and one merchant's cost table with its line masks."""
    h = np.full(np.int64(1) << k, INF, dtype=np.int64)
    h[0] = 0
    max_a = n_lines.max()
    cost = np.empty(np.int64(1) << max_a, dtype=np.int64)
    tmask = np.empty(np.int64(1) << max_a, dtype=np.int64)
    return h, cost, tmask


@numba.njit(cache=True)
def merchant_dp(k, mask, n_lines, lines, amount, units, sub0, units0, params, pick):
    """Exact optimum over the k free lines: returns (total, merchant per free line).

    ``pick`` int[M, 2^k] receives each layer's chosen compressed subset (for the backtrack).
    States are updated in place in decreasing order: ``S - T < S`` for nonempty T, so every
    read sees the previous layer. One call; the solver runs the same pieces in slices."""
    size = np.int64(1) << k
    h, cost, tmask = merchant_tables(k, n_lines)
    for m in range(mask.shape[0]):
        subset_costs(m, n_lines, amount, units, sub0[m], units0[m], params, cost, tmask, lines)
        merchant_states(m, size, 0, mask[m], n_lines, lines, h, cost, pick)
    return h[size - 1], merchant_backtrack(k, n_lines, lines, pick)
