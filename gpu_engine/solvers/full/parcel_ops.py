"""The full search's walk on version 2 carts (parcels per node), written once for both devices.

Each function is a ``numba.njit`` dispatcher: the CPU search (:mod:`gpu_engine.solvers.full.cpu`)
calls it, and the CUDA kernel (:mod:`gpu_engine.solvers.full.cuda_parcels`) calls the same
object as a device function, as kernels call :func:`gpu_engine.pricing.merchant_cost`. Prices
come only from :func:`gpu_engine.pricing.parcel_fee` and :func:`gpu_engine.pricing.owner_cost`.

Numbering and the flat layout are version 1's (:mod:`gpu_engine.solvers.full.ops`); the entries
name compact *columns* (a merchant's node). ``lgrams[k]`` is line k's quantity * weight. The
state of a row's prefix: per column ``units``, ``grams`` and ``fee`` (its parcel's fee), per
merchant (``owner[c]``) ``osub``, ``ounits``, ``oparcels`` (the sum of its columns' fees) and
``ocost``. Column rules: ``base, extra, tier_up, tier_fee, tier_count, per_kg``; merchant
terms: ``free, dmin, dbp``.
"""

from __future__ import annotations

import numba

from gpu_engine.pricing import owner_cost, parcel_fee


@numba.njit(cache=True)
def column_fee(c, units, grams, base, extra, tier_up, tier_fee, tier_count, per_kg):
    """The fee of column ``c``'s parcel of ``units`` units weighing ``grams``."""
    return parcel_fee(
        units, grams, base[c], extra[c], tier_up[c], tier_fee[c], tier_count[c], per_kg[c]
    )


@numba.njit(cache=True)
def shift_line(
    sign, e, q, g, cand, amount, owner, units, grams, fee, osub, ounits, oparcels, ocost,
    base, extra, tier_up, tier_fee, tier_count, per_kg, free, dmin, dbp,
):  # fmt: skip
    """Add (``sign`` 1) or take away (-1) entry ``e`` of a line of ``q`` units weighing ``g``:
    its column's parcel and its merchant are re-priced. Returns the change of the total."""
    c = cand[e]
    o = owner[c]
    units[c] += sign * q
    grams[c] += sign * g
    p = column_fee(c, units[c], grams[c], base, extra, tier_up, tier_fee, tier_count, per_kg)
    oparcels[o] += p - fee[c]
    fee[c] = p
    osub[o] += sign * amount[e]
    ounits[o] += sign * q
    cost = owner_cost(osub[o], ounits[o], oparcels[o], free[o], dmin[o], dbp[o])
    delta = cost - ocost[o]
    ocost[o] = cost
    return delta


@numba.njit(cache=True)
def row_state(
    prefix, digits, off, cand, amount, qty, lgrams, n_columns, n_owners, owner,
    sub0, units0, grams0, units, grams, fee, osub, ounits, oparcels, ocost,
    base, extra, tier_up, tier_fee, tier_count, per_kg, free, dmin, dbp,
):  # fmt: skip
    """Build the state of the prefix ``digits`` on the folded lines; returns its total."""
    for o in range(n_owners):
        osub[o] = 0
        ounits[o] = 0
        oparcels[o] = 0
    for c in range(n_columns):
        units[c] = units0[c]
        grams[c] = grams0[c]
        osub[owner[c]] += sub0[c]
        ounits[owner[c]] += units0[c]
    for k in range(prefix):
        e = off[k] + digits[k]
        c = cand[e]
        units[c] += qty[k]
        grams[c] += lgrams[k]
        osub[owner[c]] += amount[e]
        ounits[owner[c]] += qty[k]
    for c in range(n_columns):
        fee[c] = column_fee(
            c, units[c], grams[c], base, extra, tier_up, tier_fee, tier_count, per_kg
        )
        oparcels[owner[c]] += fee[c]
    total = 0
    for o in range(n_owners):
        ocost[o] = owner_cost(osub[o], ounits[o], oparcels[o], free[o], dmin[o], dbp[o])
        total += ocost[o]
    return total


@numba.njit(cache=True)
def next_row(
    prefix, digits, radix, off, cand, amount, qty, lgrams, owner,
    units, grams, fee, osub, ounits, oparcels, ocost,
    base, extra, tier_up, tier_fee, tier_count, per_kg, free, dmin, dbp,
):  # fmt: skip
    """Step the prefix digits like an odometer (one line moves most of the time); returns the
    change of the total."""
    delta = 0
    k = prefix - 1
    while k >= 0:
        old = digits[k]
        new = old + 1
        if new == radix[k]:
            new = 0
        digits[k] = new
        delta += shift_line(
            -1, off[k] + old, qty[k], lgrams[k], cand, amount, owner, units, grams, fee,
            osub, ounits, oparcels, ocost,
            base, extra, tier_up, tier_fee, tier_count, per_kg, free, dmin, dbp,
        )  # fmt: skip
        delta += shift_line(
            1, off[k] + new, qty[k], lgrams[k], cand, amount, owner, units, grams, fee,
            osub, ounits, oparcels, ocost,
            base, extra, tier_up, tier_fee, tier_count, per_kg, free, dmin, dbp,
        )  # fmt: skip
        if new != 0:
            break
        k -= 1
    return delta


@numba.njit(cache=True)
def row_single(
    row, total, lb, j_lo, j_hi, r_b, off, cand, amount, qty, lgrams, owner,
    units, grams, fee, osub, ounits, oparcels, ocost,
    base, extra, tier_up, tier_fee, tier_count, per_kg, free, dmin, dbp, best_t, best_i,
):  # fmt: skip
    """Price the row's assignments ``j_lo <= j < j_hi`` of the last line ``lb``: one parcel
    and one merchant re-priced each. Returns the better (total, index) of those and
    ``(best_t, best_i)``; ties keep the lower index."""
    e0 = off[lb]
    q = qty[lb]
    g = lgrams[lb]
    for j in range(j_lo, j_hi):
        e = e0 + j
        c = cand[e]
        o = owner[c]
        p = column_fee(
            c, units[c] + q, grams[c] + g, base, extra, tier_up, tier_fee, tier_count, per_kg
        )
        t = total - ocost[o]
        t += owner_cost(
            osub[o] + amount[e], ounits[o] + q, oparcels[o] - fee[c] + p, free[o], dmin[o], dbp[o]
        )
        if t < best_t:
            best_t = t
            best_i = row * r_b + j
    return best_t, best_i


@numba.njit(cache=True)
def row_pair(
    row, total, la, lb, r_a, r_b, off, cand, amount, qty, lgrams, owner,
    units, grams, fee, osub, ounits, oparcels, ocost,
    base, extra, tier_up, tier_fee, tier_count, per_kg, free, dmin, dbp, delta_b, best_t, best_i,
):  # fmt: skip
    """Price the row's ``r_a * r_b`` assignments of lines a and b. Lines at different
    merchants are separable (``delta_b``: b's change, scratch of ``r_b`` entries, priced once a
    row); at one merchant the merchant is priced jointly, with one parcel (same node) or two."""
    off_a = off[la]
    off_b = off[lb]
    q_a = qty[la]
    q_b = qty[lb]
    g_a = lgrams[la]
    g_b = lgrams[lb]
    for j in range(r_b):
        e = off_b + j
        c = cand[e]
        o = owner[c]
        p = column_fee(
            c, units[c] + q_b, grams[c] + g_b, base, extra, tier_up, tier_fee, tier_count, per_kg
        )
        delta_b[j] = (
            owner_cost(
                osub[o] + amount[e],
                ounits[o] + q_b,
                oparcels[o] - fee[c] + p,
                free[o],
                dmin[o],
                dbp[o],
            )
            - ocost[o]
        )
    for i in range(r_a):
        ea = off_a + i
        ca = cand[ea]
        oa = owner[ca]
        units_a = units[ca] + q_a
        grams_a = grams[ca] + g_a
        p_a = column_fee(ca, units_a, grams_a, base, extra, tier_up, tier_fee, tier_count, per_kg)
        sub_a = osub[oa] + amount[ea]
        ounits_a = ounits[oa] + q_a
        parcels_a = oparcels[oa] - fee[ca] + p_a
        base_t = total - ocost[oa]
        with_a = base_t + owner_cost(sub_a, ounits_a, parcels_a, free[oa], dmin[oa], dbp[oa])
        first = (row * r_a + i) * r_b
        for j in range(r_b):
            eb = off_b + j
            cb = cand[eb]
            if owner[cb] != oa:
                t = with_a + delta_b[j]
            else:
                if cb == ca:
                    p = column_fee(
                        ca, units_a + q_b, grams_a + g_b,
                        base, extra, tier_up, tier_fee, tier_count, per_kg,
                    )  # fmt: skip
                    parcels = parcels_a - p_a + p
                else:
                    p = column_fee(
                        cb, units[cb] + q_b, grams[cb] + g_b,
                        base, extra, tier_up, tier_fee, tier_count, per_kg,
                    )  # fmt: skip
                    parcels = parcels_a - fee[cb] + p
                t = base_t + owner_cost(
                    sub_a + amount[eb], ounits_a + q_b, parcels, free[oa], dmin[oa], dbp[oa]
                )
            if t < best_t:
                best_t = t
                best_i = first + j
    return best_t, best_i
