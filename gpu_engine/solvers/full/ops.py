"""The full search's assignment walk, written once for both devices.

Plain Python compiled twice: ``numba.njit`` in :mod:`gpu_engine.solvers.full.cpu` (the CPU twin
walks one range of rows) and ``cuda.jit(device=True)`` in :mod:`gpu_engine.solvers.full.cuda`
(each thread walks its chunks of rows). Like :mod:`gpu_engine.solvers.ga.ops` they call only
the scalar ``merchant_cost``, never each other (the kernel builder rebinds that name to the
device's pricing function, :func:`gpu_engine.pricing.device_merchant_cost`).

Numbering (:mod:`gpu_engine.layout`): mixed radix, the last free line fastest. A *row* is one
choice of every *prefix* line (all free lines but the last, or in pair mode the last two);
row ``r``'s assignments are ``r * r_in + j``. The flat layout: line ``k``'s choices are entries
``off[k] .. off[k + 1] - 1`` of ``cand`` (compact merchant) and ``amount`` (quantity * price);
``qty[k]`` its quantity; ``base, extra, free, dmin, dbp`` the merchants' rules. ``sub``,
``units``, ``cost``: the per-merchant state of the row's prefix lines (and the folded lines,
``sub0``/``units0``).
"""

from __future__ import annotations

from gpu_engine.pricing import merchant_cost


def decode_row(row, prefix, radix, digits):
    """The prefix lines' digits of ``row`` (div/mod, outermost line first)."""
    rest = row
    for k in range(prefix - 1, -1, -1):
        digits[k] = rest % radix[k]
        rest //= radix[k]


def row_state(
    prefix, digits, off, cand, amount, qty, n_merchants, sub0, units0, sub, units, cost,
    base, extra, free, dmin, dbp,
):  # fmt: skip
    """Build the per-merchant state of the prefix ``digits``; returns the state's total."""
    for m in range(n_merchants):
        sub[m] = sub0[m]
        units[m] = units0[m]
        cost[m] = 0
    for k in range(prefix):
        e = off[k] + digits[k]
        sub[cand[e]] += amount[e]
        units[cand[e]] += qty[k]
    total = 0
    for m in range(n_merchants):
        c = merchant_cost(sub[m], units[m], base[m], extra[m], free[m], dmin[m], dbp[m])
        total += c - cost[m]
        cost[m] = c
    return total


def next_row(
    prefix, digits, radix, off, cand, amount, qty, sub, units, cost, base, extra, free, dmin, dbp
):
    """Step the prefix digits like an odometer (one line moves most of the time, two merchants
    re-priced per moved line); returns the change of the total."""
    delta = 0
    k = prefix - 1
    while k >= 0:
        old = digits[k]
        new = old + 1
        if new == radix[k]:
            new = 0
        digits[k] = new
        e = off[k] + old
        m = cand[e]
        sub[m] -= amount[e]
        units[m] -= qty[k]
        c = merchant_cost(sub[m], units[m], base[m], extra[m], free[m], dmin[m], dbp[m])
        delta += c - cost[m]
        cost[m] = c
        e = off[k] + new
        m = cand[e]
        sub[m] += amount[e]
        units[m] += qty[k]
        c = merchant_cost(sub[m], units[m], base[m], extra[m], free[m], dmin[m], dbp[m])
        delta += c - cost[m]
        cost[m] = c
        if new != 0:
            break
        k -= 1
    return delta


def row_single(
    row, total, lb, j_lo, j_hi, r_b, off, cand, amount, qty, sub, units, cost,
    base, extra, free, dmin, dbp, best_t, best_i,
):  # fmt: skip
    """Price the row's assignments ``j_lo <= j < j_hi`` (the kernel: all ``r_b``) of the last
    line ``lb``: only its merchant changes, O(1) each. Returns the better (total, index) of
    those and ``(best_t, best_i)``; ties keep the lower index (rows are walked in order)."""
    e0 = off[lb]
    q = qty[lb]
    for j in range(j_lo, j_hi):
        e = e0 + j
        m = cand[e]
        t = total - cost[m]
        t += merchant_cost(
            sub[m] + amount[e], units[m] + q, base[m], extra[m], free[m], dmin[m], dbp[m]
        )
        if t < best_t:
            best_t = t
            best_i = row * r_b + j
    return best_t, best_i


def row_pair(
    row, total, la, lb, r_a, r_b, off, cand, amount, qty, sub, units, cost,
    base, extra, free, dmin, dbp, delta_b, best_t, best_i,
):  # fmt: skip
    """Price the row's ``r_a * r_b`` assignments of lines a and b. When a and b go to
    different merchants the total is separable, total + delta_a + delta_b, with each delta
    priced once per row (``delta_b``: scratch of ``r_b`` entries); when they share a merchant
    it is priced jointly. Either way every assignment's exact total is formed and compared:
    two adds per assignment."""
    off_a = off[la]
    off_b = off[lb]
    q_a = qty[la]
    q_b = qty[lb]
    for j in range(r_b):
        e = off_b + j
        m = cand[e]
        delta_b[j] = (
            merchant_cost(
                sub[m] + amount[e], units[m] + q_b, base[m], extra[m], free[m], dmin[m], dbp[m]
            )
            - cost[m]
        )
    for i in range(r_a):
        ea = off_a + i
        ma = cand[ea]
        sub_a = sub[ma] + amount[ea]
        units_a = units[ma] + q_a
        base_t = total - cost[ma]
        with_a = base_t + merchant_cost(
            sub_a, units_a, base[ma], extra[ma], free[ma], dmin[ma], dbp[ma]
        )
        first = (row * r_a + i) * r_b
        for j in range(r_b):
            eb = off_b + j
            if cand[eb] == ma:
                t = base_t + merchant_cost(
                    sub_a + amount[eb],
                    units_a + q_b,
                    base[ma],
                    extra[ma],
                    free[ma],
                    dmin[ma],
                    dbp[ma],
                )
            else:
                t = with_a + delta_b[j]
            if t < best_t:
                best_t = t
                best_i = first + j
    return best_t, best_i
