"""The batch solver's CPU twin: one cart per ``prange`` iteration (all cores), each cart solved
by one sequential walk of the steps of :mod:`gpu_engine.batch.ops` (``start, step = 0, 1``).

Exact full search: every assignment priced, lowest index on ties. Subset DP: the
merchant-by-merchant DP of :mod:`gpu_engine.solvers.dp.cpu` over the cart's free lines, with two
layer buffers (as on the GPU) so both devices make the same choices; its per-state step is
:func:`gpu_engine.solvers.dp.ops.best_split`.
"""

from __future__ import annotations

import numba
import numpy as np

from gpu_engine.batch import ops
from gpu_engine.batch.pack import DP, FULL, MAX_DP_LINES, MAX_FULL_LINES
from gpu_engine.solvers.dp import ops as dp_ops

_full_search = numba.njit(cache=True)(ops.full_search)
_decode_full = numba.njit(cache=True)(ops.decode_full)
_merchant_lines = numba.njit(cache=True)(ops.merchant_lines)
_cost_table = numba.njit(cache=True)(ops.cost_table)
_compress = numba.njit(cache=True)(ops.compress)
_fill_layer = numba.njit(cache=True)(ops.fill_layer)
_assign_merchant = numba.njit(cache=True)(ops.assign_merchant)
_rest_lines = numba.njit(cache=True)(ops.rest_lines)
_push_layer = numba.njit(cache=True)(ops.push_layer)
_clear_costs = numba.njit(cache=True)(ops.clear_costs)
_rest_tables = numba.njit(cache=True)(ops.rest_tables)
_dp_tables = numba.njit(cache=True)(ops.dp_tables)
_finish_layer = numba.njit(cache=True)(ops.finish_layer)
_best_split = numba.njit(cache=True)(dp_ops.best_split)


@numba.njit(cache=True)
def _solve_dp(
    c,
    line_ptr,
    line_qty,
    offer_ptr,
    offer_end,
    offer_merchant,
    offer_amount,
    merch_ptr,
    merch_row,
    params,
    skip,
    bound,
    fee_share,
    h,
    cost,
    lists,
    pick,
    out_choice,
):
    """One cart's exact subset DP; ``h`` int64[2, 2^k], ``cost`` int64[2^k], ``lists``
    int64[2, 2^k] (the pushed layers' reached sets), ``pick`` uint16[merchants, 2^k];
    merchants flagged in ``skip`` get no layer. With ``bound`` (the total of some assignment)
    below ``KEY_LIMIT``, each layer is pushed from the live line sets of the one before
    (:func:`gpu_engine.batch.ops.push_layer`), else pulled for every set. Returns the total
    and writes each line's merchant."""
    base, extra, free_over, dmin, dbp = params
    l0 = line_ptr[c]
    n = line_ptr[c + 1] - l0
    m0 = merch_ptr[c]
    n_merch = merch_ptr[c + 1] - m0
    size = h.shape[1]
    bits = np.empty(MAX_DP_LINES, dtype=np.int64)
    amounts = np.empty(MAX_DP_LINES, dtype=np.int64)
    units = np.empty(MAX_DP_LINES, dtype=np.int64)
    rest = np.empty(MAX_DP_LINES, dtype=np.int64)
    tables = np.empty(ops.REST_TABLES, dtype=np.int64)
    k = 0
    while (1 << k) < size:
        k += 1
    _fill_layer(0, 1, size, h[0])
    pushed = bound < ops.KEY_LIMIT
    counts = np.zeros(2, dtype=np.int64)
    if pushed:
        _fill_layer(1, 1, size, h[1])
        h[1, 0] = ops.INF
        lists[0, 0] = 0
        counts[0] = 1
    layer = 0
    for m in range(n_merch):
        if skip[m0 + m]:
            continue
        a, mask, sub0, units0 = _merchant_lines(
            m,
            l0,
            n,
            offer_ptr,
            offer_end,
            offer_merchant,
            offer_amount,
            line_qty,
            bits,
            amounts,
            units,
        )
        if not pushed:
            _cost_table(
                0, 1, a, sub0, units0, amounts, units, merch_row[m0 + m], base, extra,
                free_over, dmin, dbp, cost,
            )  # fmt: skip
        prev = h[layer % 2]
        nxt = h[(layer + 1) % 2]
        if pushed:
            forced_rest = _rest_lines(
                m - 1, l0, n, m0, offer_ptr, offer_end, offer_merchant, offer_amount, line_qty,
                merch_row, extra, dmin, dbp, skip, fee_share, rest,
            )  # fmt: skip
            _rest_tables(k, rest, tables)
            cur = layer % 2
            counts[1 - cur] = 0
            _clear_costs(0, 1, a, cost)
            _push_layer(
                0, 1, prev, lists[cur], counts[cur], nxt, lists[1 - cur], counts, 1 - cur,
                mask, a, bits, cost, tables, k, forced_rest, bound,
                sub0, units0, amounts, units, merch_row[m0 + m], base, extra, free_over, dmin,
                dbp,
            )  # fmt: skip
            _finish_layer(
                0, 1, nxt, lists[1 - cur], counts[1 - cur], pick[m], 0, prev, lists[cur],
                counts[cur],
            )  # fmt: skip
            layer += 1
            continue
        for s in range(size):
            x = s & mask
            best, best_t = _best_split(s, x, _compress(x, a, bits), prev, cost)
            nxt[s] = best
            pick[m, s] = best_t
        layer += 1
    s = size - 1
    total = h[layer % 2][s]
    for m in range(n_merch - 1, -1, -1):
        if skip[m0 + m]:
            continue
        s ^= _assign_merchant(
            m, pick[m, s], l0, n, offer_ptr, offer_end, offer_merchant, out_choice
        )
    return total


@numba.njit(cache=True, parallel=True)
def solve_range(
    lo,
    hi,
    method,
    complexity,
    ws_ptr,
    pick_ptr,
    skip,
    bound,
    fee_share,
    line_ptr,
    line_qty,
    offer_ptr,
    offer_end,
    offer_merchant,
    offer_amount,
    merch_ptr,
    merch_row,
    params,
    ws,
    pick,
    out_total,
    out_choice,
):
    """Solve carts ``lo .. hi - 1`` (those planned FULL or DP) into ``out_total[c]`` and
    ``out_choice[line]`` (cart-local merchant), over the offers the plan kept (each line's
    ``offer_ptr[line] .. offer_end[line] - 1`` of its reordered ``offer_merchant`` and
    ``offer_amount``). ``ws``/``pick`` are the scratch of this range:
    cart ``c``'s starts at ``ws_ptr[c] - ws_ptr[lo]`` (and likewise for ``pick``)."""
    base, extra, free_over, dmin, dbp = params
    for c in numba.prange(lo, hi):
        l0 = line_ptr[c]
        n = line_ptr[c + 1] - l0
        if method[c] == FULL:
            choice = np.empty(MAX_FULL_LINES, dtype=np.int64)
            total, index = _full_search(
                0,
                1,
                l0,
                n,
                complexity[c],
                offer_ptr,
                offer_end,
                offer_merchant,
                offer_amount,
                line_qty,
                merch_ptr[c],
                merch_row,
                base,
                extra,
                free_over,
                dmin,
                dbp,
                choice,
            )
            _decode_full(index, l0, n, offer_ptr, offer_end, offer_merchant, out_choice)
            out_total[c] = total
        elif method[c] == DP:
            w0 = ws_ptr[c] - ws_ptr[lo]
            size = (ws_ptr[c + 1] - ws_ptr[c]) // _dp_tables(bound[c])
            h = ws[w0 : w0 + 2 * size].reshape((2, size))
            cost = ws[w0 + 2 * size : w0 + 3 * size]
            # The dense layers have no lists (any array of the shape serves, unread).
            lists = h
            if _dp_tables(bound[c]) == ops.DP_TABLES:
                lists = ws[w0 + 3 * size : w0 + 5 * size].reshape((2, size))
            p0 = pick_ptr[c] - pick_ptr[lo]
            n_merch = merch_ptr[c + 1] - merch_ptr[c]
            rows = pick[p0 : p0 + n_merch * size].reshape((n_merch, size))
            out_total[c] = _solve_dp(
                c,
                line_ptr,
                line_qty,
                offer_ptr,
                offer_end,
                offer_merchant,
                offer_amount,
                merch_ptr,
                merch_row,
                params,
                skip,
                bound[c],
                fee_share,
                h,
                cost,
                lists,
                rows,
                out_choice,
            )
