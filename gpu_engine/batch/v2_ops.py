"""The batch's exact full search on version 2 carts, written once for both devices.

Plain Python compiled twice, as :mod:`gpu_engine.batch.ops` is: ``numba.njit`` in
:mod:`gpu_engine.batch.v2_cpu` (one cart per ``prange`` iteration, ``start, step = 0, 1``) and
``cuda.jit(device=True)`` in :mod:`gpu_engine.batch.v2_cuda` (one block per cart, thread ``t``
of ``T`` prices assignments ``t, t + T, ...``). Prices come only from
:func:`gpu_engine.pricing.parcel_fee` and :func:`gpu_engine.pricing.owner_cost`.

A cart is a slice of :class:`gpu_engine.batch.v2_pack.PackedV2`: lines ``l0 .. l0 + n - 1``,
columns ``k0 + j`` (``j`` the cart-local column an offer names), merchants ``q0 + o`` (``o`` a
column's cart-local owner).
"""

from __future__ import annotations

from gpu_engine.pricing import owner_cost, parcel_fee

INF = 2**62


def full_search_v2(
    start, step, l0, n, complexity, offer_ptr, offer_col, offer_amount, line_qty, line_grams,
    k0, col_owner, base, extra, tier_up, tier_fee, tier_count, per_kg, q0, free_over, dmin, dbp,
    choice,
):  # fmt: skip
    """Cheapest (total, index) over assignment indexes ``start, start + step, ...`` below
    ``complexity``, lowest index on ties; the numbering is v1's mixed radix (last line
    fastest, digit = offer rank within the line). ``choice`` is scratch of ``n`` offer indexes.
    Each assignment is priced from scratch without per-column arrays (a thread has none on the
    GPU): a merchant is priced at its first line, each of its parcels at the parcel's first
    line, summing the later lines that share it."""
    best = INF
    best_index = -1
    for index in range(start, complexity, step):
        rest = index
        for i in range(n - 1, -1, -1):
            line = l0 + i
            radix = offer_ptr[line + 1] - offer_ptr[line]
            choice[i] = offer_ptr[line] + rest % radix
            rest //= radix
        total = 0
        for i in range(n):
            o = col_owner[k0 + offer_col[choice[i]]]
            first = True
            for j in range(i):
                if col_owner[k0 + offer_col[choice[j]]] == o:
                    first = False
                    break
            if not first:
                continue
            sub = 0
            units = 0
            parcels = 0
            for j in range(i, n):
                col = offer_col[choice[j]]
                if col_owner[k0 + col] != o:
                    continue
                sub += offer_amount[choice[j]]
                units += line_qty[l0 + j]
                fresh = True
                for k in range(i, j):
                    if offer_col[choice[k]] == col:
                        fresh = False
                        break
                if not fresh:
                    continue
                parcel_units = 0
                grams = 0
                for k in range(j, n):
                    if offer_col[choice[k]] == col:
                        parcel_units += line_qty[l0 + k]
                        grams += line_grams[l0 + k]
                g = k0 + col
                parcels += parcel_fee(
                    parcel_units,
                    grams,
                    base[g],
                    extra[g],
                    tier_up[g],
                    tier_fee[g],
                    tier_count[g],
                    per_kg[g],
                )
            q = q0 + o
            total += owner_cost(sub, units, parcels, free_over[q], dmin[q], dbp[q])
        if total < best:
            best = total
            best_index = index
    return best, best_index


def decode_v2(index, l0, n, offer_ptr, offer_col, out_choice):
    """Write the cart-local column of every line of assignment ``index`` to ``out_choice``."""
    rest = index
    for i in range(n - 1, -1, -1):
        line = l0 + i
        radix = offer_ptr[line + 1] - offer_ptr[line]
        out_choice[line] = offer_col[offer_ptr[line] + rest % radix]
        rest //= radix
