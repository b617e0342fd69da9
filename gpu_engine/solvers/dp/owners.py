"""Version 2 cost tables of the subset DPs: one merchant's (owner's) exact cost for every set of
its lines, minimised over every split of those lines over its fulfillment nodes.

A merchant's cost is not separable by node: its discount and its free-shipping threshold count
the lines of all its nodes, and a node's parcel fee counts that node's lines only. So the table
is built by enumerating every placement of the owner's lines (a line: absent, or at one of its
eligible nodes) and pricing each with :func:`gpu_engine.pricing.parcel_fee` and
:func:`gpu_engine.pricing.owner_cost`, exactly as the spec prices an assignment. The placements
are walked in mixed-radix counting order (line 0 the fastest digit), each step moving one or
a few lines (amortised under two), re-pricing only the parcels it touched.

An owner's lines come in two kinds: its *free* lines (bits 0..n_free-1 of the table index; a
free line may go to another merchant, so it may be absent) and its *bound* lines, which no other
merchant sells: always present, only their node varies. ``state`` keeps, per table entry, the
placement's counter value (< the owner's placement count, so it fits int64) for the backtrack.
"""

from __future__ import annotations

import numba
import numpy as np

from gpu_engine.pricing import owner_cost, parcel_fee
from gpu_engine.solvers.dp import ops as dp_ops

INF = np.int64(dp_ops.INF)


@numba.njit(cache=True)
def _refee(c, nu, ng, fee, base, extra, tier_up, tier_fee, tier_count, per_kg):
    """Re-price local node ``c``'s parcel; returns the change of the owner's parcel sum."""
    new = parcel_fee(
        nu[c], ng[c], base[c], extra[c], tier_up[c], tier_fee[c], tier_count[c], per_kg[c]
    )
    delta = new - fee[c]
    fee[c] = new
    return delta


@numba.njit(cache=True)
def owner_table(
    n_lines, n_free, radix, node, amount, units, grams,
    base, extra, tier_up, tier_fee, tier_count, per_kg, free_over, dmin, dbp,
    out_cost, out_state,
):  # fmt: skip
    """Fill ``out_cost[t]`` (2^n_free entries) with the owner's cheapest cost for the free-line
    set ``t`` (its bound lines always shipped) and ``out_state[t]`` with that placement.

    Line j has ``radix[j]`` placements: free lines 0 = absent, d >= 1 = its option d - 1; bound
    lines d = option d. Option o of line j ships at local node ``node[j, o]`` for
    ``amount[j, o]`` cents; ``units``/``grams`` are the line's quantity and weight. Node
    arrays (``base`` .. ``per_kg``) are the owner's columns, in local order."""
    n_nodes = base.shape[0]
    nu = np.zeros(n_nodes, dtype=np.int64)
    ng = np.zeros(n_nodes, dtype=np.int64)
    fee = np.zeros(n_nodes, dtype=np.int64)
    digit = np.zeros(max(1, n_lines), dtype=np.int64)
    sub = np.int64(0)
    tot = np.int64(0)
    for j in range(n_free, n_lines):  # bound lines start at their first option
        c = node[j, 0]
        nu[c] += units[j]
        ng[c] += grams[j]
        sub += amount[j, 0]
        tot += units[j]
    parcels = np.int64(0)
    for c in range(n_nodes):
        parcels += _refee(c, nu, ng, fee, base, extra, tier_up, tier_fee, tier_count, per_kg)
    for t in range(out_cost.shape[0]):
        out_cost[t] = INF
        out_state[t] = 0
    n_states = np.int64(1)
    for j in range(n_lines):
        n_states *= radix[j]
    tc = np.int64(0)
    for s in range(n_states):
        if s > 0:  # advance the counter by one, moving the lines whose digit changes
            j = 0
            while True:
                d = digit[j]
                opt = d - 1 if j < n_free else d
                if opt >= 0:
                    c = node[j, opt]
                    nu[c] -= units[j]
                    ng[c] -= grams[j]
                    sub -= amount[j, opt]
                    tot -= units[j]
                    parcels += _refee(
                        c, nu, ng, fee, base, extra, tier_up, tier_fee, tier_count, per_kg
                    )
                wrapped = d + 1 >= radix[j]
                d = 0 if wrapped else d + 1
                digit[j] = d
                opt = d - 1 if j < n_free else d
                if j < n_free:
                    if opt >= 0:
                        tc |= np.int64(1) << j
                    else:
                        tc &= ~(np.int64(1) << j)
                if opt >= 0:
                    c = node[j, opt]
                    nu[c] += units[j]
                    ng[c] += grams[j]
                    sub += amount[j, opt]
                    tot += units[j]
                    parcels += _refee(
                        c, nu, ng, fee, base, extra, tier_up, tier_fee, tier_count, per_kg
                    )
                if not wrapped:
                    break
                j += 1
        cost = owner_cost(sub, tot, parcels, free_over, dmin, dbp)
        if cost < out_cost[tc]:
            out_cost[tc] = cost
            out_state[tc] = s


@numba.njit(cache=True)
def fill_rows(
    line_of, line_count, n_free, col0, col1, price, quantity, weight, bit,
    radix, column, local, amount, units, grams, lines, mask,
):  # fmt: skip
    """The per-line arrays of every table row (see ``owner_table``) from its lines
    ``line_of[r, :line_count[r]]`` (the first ``n_free[r]`` of them DP lines) and its owner's
    columns ``col0[r]:col1[r]``: each line's eligible columns (``column``, and ``local`` within
    the owner), their amounts, the line's placements (``radix``); for the layer rows also each
    DP line's bit (``lines``) and the row's bit ``mask``."""
    for r in range(line_of.shape[0]):
        a = col0[r]
        for j in range(line_count[r]):
            i = line_of[r, j]
            n = 0
            for c in range(a, col1[r]):
                if price[i, c] >= 0:
                    column[r, j, n] = c
                    local[r, j, n] = c - a
                    amount[r, j, n] = quantity[i] * price[i, c]
                    n += 1
            units[r, j] = quantity[i]
            grams[r, j] = quantity[i] * weight[i]
            if j < n_free[r]:
                radix[r, j] = n + 1
                lines[r, j] = bit[i]
                mask[r] |= np.int64(1) << bit[i]
            else:
                radix[r, j] = n


@numba.njit(cache=True)
def owner_tables(
    n_lines, n_free, radix, node, amount, units, grams, col0, col1, table_off,
    base, extra, tier_up, tier_fee, tier_count, per_kg, free_over, dmin, dbp,
    out_cost, out_state,
):  # fmt: skip
    """Every owner's table, concatenated at ``table_off``: owner ``o``'s lines are row ``o``
    of the padded per-line arrays, its nodes the columns ``col0[o]:col1[o]`` (columns are
    grouped by owner) and its terms ``free_over[o]``, ``dmin[o]``, ``dbp[o]``."""
    for o in range(n_lines.shape[0]):
        a, b = col0[o], col1[o]
        lo, hi = table_off[o], table_off[o + 1]
        owner_table(
            n_lines[o],
            n_free[o],
            radix[o],
            node[o],
            amount[o],
            units[o],
            grams[o],
            base[a:b],
            extra[a:b],
            tier_up[a:b],
            tier_fee[a:b],
            tier_count[a:b],
            per_kg[a:b],
            free_over[o],
            dmin[o],
            dbp[o],
            out_cost[lo:hi],
            out_state[lo:hi],
        )


@numba.njit(cache=True)
def relaxed_owner_groups(k, n_lines, lines, table_off, cost):
    """``g[T]`` = the cheapest owner's table cost for the line set T (every line free), that
    entry's index into the concatenated tables, and its owner (-1: no owner ships T)."""
    size = np.int64(1) << k
    g = np.full(size, INF, dtype=np.int64)
    g_entry = np.zeros(size, dtype=np.int64)
    g_owner = np.full(size, -1, dtype=np.int32)
    for o in range(n_lines.shape[0]):
        a = n_lines[o]
        tmask = np.zeros(np.int64(1) << a, dtype=np.int64)
        for t in range(1, np.int64(1) << a):
            low = t & -t
            b = 0
            while (np.int64(1) << b) != low:
                b += 1
            tmask[t] = tmask[t ^ low] | (np.int64(1) << lines[o, b])
            e = table_off[o] + t
            if cost[e] < g[tmask[t]]:
                g[tmask[t]] = cost[e]
                g_entry[tmask[t]] = e
                g_owner[tmask[t]] = o
    return g, g_entry, g_owner
