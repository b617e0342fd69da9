"""The batch's exact pruning, one per-cart step written once for both devices (as
:mod:`gpu_engine.batch.ops`): plain :func:`prune_cart` compiled by ``numba.njit`` in
:mod:`gpu_engine.batch.pack` (one cart per ``prange`` iteration) and by ``cuda.jit`` in
:mod:`gpu_engine.batch.cuda` (one thread per cart, in the plan kernel), before
:func:`gpu_engine.batch.ops.plan_cart` chooses the method. Its helpers are ``numba.njit``
dispatchers, which numba-cuda compiles as device functions (as :func:`merchant_cost`).

1. An upper bound ``U``: the cheapest of a few assignments priced exactly with
   :func:`merchant_cost` (every line at its cheapest amount; for each merchant, every line it
   sells at it and the rest at their cheapest), then single-line moves that lower the exact
   total, line by line, until none does (or :data:`MAX_PASSES`).
2. A lower bound per offer. Merchant ``m``'s cost of lines ``S`` is at least its goods,
   ``s - floor(s * bp / 10^4)`` with ``s`` the sum of their amounts, which is at least
   ``sum(a - ceil(a * bp / 10^4))`` over them (a floor of a sum is at most the sum of the
   ceilings), or ``s`` itself without a discount: ``lb_offer``. Shipping is never negative,
   and a merchant whose offers in the cart sum below its free-shipping threshold (or that has
   none) pays ``base + extra * (units - 1)`` whenever it ships, ``units`` at least the line's
   quantity: ``must``. So every assignment putting line ``l`` at offer ``o`` costs at least
   ``LB0 - lb_line(l) + lb_offer(o) + must(o)``, where ``lb_line`` is the least ``lb_offer``
   of a line and ``LB0`` their sum. A second bound comes from a facility-location relaxation:
   a merchant that can reach its threshold pays at least ``g + f * (1 - g / F)`` when it
   ships goods ``g`` (``f = min(base, F)``), one that cannot pays ``base`` plus its extra
   units' fees, so a greedy dual (each line's value raised until a merchant's fixed fee is
   used up) gives ``sum(v) + slack(m) + max(0, cost(l, m) - v(l))`` for line ``l`` at ``m``
   (the reduced-cost argument of uncapacitated facility location). An offer whose bound
   exceeds ``U`` is in no assignment costing ``U`` or less, so in no optimal one: it is
   dropped. A third bound spreads fees over lines: a merchant whose offers cannot reach its
   threshold pays its base fee once whichever lines it ships, so each of them may carry
   ``base // (lines it could take)`` plus its extra units' fee (:func:`fee_shares`); the DP
   uses these shares too. Rounds repeat while they drop offers (fewer offers lower the
   merchants' sums and raise the lines' least bounds). Carts whose unpruned methods are
   cheap (:data:`PRUNE_MIN_STEPS`) are left as they are.
3. Dropping is a stable partition of the line's offers in place (the kept ones first, in
   their order; ``offer_end[line]`` the end of the kept ones). The arrays are the plan's own:
   the device copy on the GPU, a copy the CPU twin makes. The U assignment's offers are never
   dropped (their bounds are at most ``U``), so every line keeps one; a line left with one
   becomes forced for the method the plan then chooses on the smaller cart.

Every optimal total survives: answers equal the unpruned solver's totals (the assignment may
be another of equal total). Ties between moves keep the first; both devices run the same
integer steps, so they prune alike.
"""

from __future__ import annotations

import numba

from gpu_engine.pricing import BP_SCALE, merchant_cost

INF = 2**62
# Fees and thresholds below this keep the facility-location bound's products in int64.
SAFE = 2**31
# Improving passes over the lines in the local search (it usually settles in two).
MAX_PASSES = 4
# Carts whose full search prices at most this many lines are solved as they are: pruning
# them costs more than it saves.
PRUNE_MIN_STEPS = 20000
# The plan's ``prune`` level that prunes every cart, however small (tests).
PRUNE_ALWAYS = 2
# Pruning rounds (each recomputes the bounds on the offers the last one kept).
MAX_ROUNDS = 3


@numba.njit(cache=True)
def lb_offer(amount, disc_min_units, disc_bp):
    """The least an offer of ``amount`` adds to its merchant's goods: ``amount`` less the
    most a discount can take of it, ``ceil(amount * bp / 10^4)`` (split as the pricing routine
    splits the product, so it cannot overflow)."""
    if disc_min_units <= 0:
        return amount
    taken = (amount // BP_SCALE) * disc_bp + ((amount % BP_SCALE) * disc_bp + BP_SCALE - 1) // (
        BP_SCALE
    )
    return amount - taken


@numba.njit(cache=True)
def relax_min(values, i, key):
    """``values[i] = min(values[i], key)``, returning the value before: the CPU's; the CUDA
    twin binds this name to an atomic minimum (:mod:`gpu_engine.batch.cuda`)."""
    old = values[i]
    if key < old:
        values[i] = key
    return old


@numba.njit(cache=True)
def bump(counts, i):
    """``counts[i] += 1``, returning the value before: the CPU's; the CUDA twin binds this
    name to an atomic add."""
    old = counts[i]
    counts[i] = old + 1
    return old


@numba.njit(cache=True)
def must_fee(cap, qty, base_fee, per_extra_unit, free_over):
    """Shipping a merchant pays for sure when it ships a line of ``qty`` units: its fee for
    those units when its offers in the cart (``cap``, their undiscounted sum) cannot reach
    its free-shipping threshold, else 0."""
    if free_over >= 0 and cap >= free_over:
        return 0
    return base_fee + per_extra_unit * (qty - 1)


@numba.njit(cache=True)
def price_preferred(
    pref, l0, n, m0, n_merch, offer_ptr, offer_merchant, offer_amount, line_qty, merch_row,
    base, extra, free_over, dmin, dbp, sub, units, choice,
):  # fmt: skip
    """The exact total of the assignment that puts every line at merchant ``pref`` where it
    sells it and elsewhere at the line's cheapest amount (first on ties); ``pref = -1``: every
    line at its cheapest. With ``choice`` (length > 0) the offers go to ``choice[line]``;
    ``sub``/``units`` hold each merchant's subtotal and units afterwards."""
    for m in range(m0, m0 + n_merch):
        sub[m] = 0
        units[m] = 0
    for line in range(l0, l0 + n):
        pick = -1
        for o in range(offer_ptr[line], offer_ptr[line + 1]):
            if offer_merchant[o] == pref:
                pick = o
                break
            if pick < 0 or offer_amount[o] < offer_amount[pick]:
                pick = o
        m = m0 + offer_merchant[pick]
        sub[m] += offer_amount[pick]
        units[m] += line_qty[line]
        if choice.size > 0:
            choice[line] = pick
    total = 0
    for m in range(m0, m0 + n_merch):
        g = merch_row[m]
        total += merchant_cost(sub[m], units[m], base[g], extra[g], free_over[g], dmin[g], dbp[g])
    return total


@numba.njit(cache=True)
def improve(
    total, l0, n, m0, offer_ptr, offer_merchant, offer_amount, line_qty, merch_row,
    base, extra, free_over, dmin, dbp, sub, units, choice,
):  # fmt: skip
    """Single-line moves from the assignment ``choice`` (offer per line, totalling ``total``,
    merchants' sums in ``sub``/``units``): each line in turn takes the offer that lowers the
    exact total most (only two merchants' costs change), until a pass moves nothing. Returns
    the new total."""
    for _ in range(MAX_PASSES):
        moved = False
        for line in range(l0, l0 + n):
            lo = offer_ptr[line]
            hi = offer_ptr[line + 1]
            if hi - lo < 2:
                continue
            cur = choice[line]
            q = line_qty[line]
            a = offer_amount[cur]
            mo = m0 + offer_merchant[cur]
            g = merch_row[mo]
            before = merchant_cost(
                sub[mo], units[mo], base[g], extra[g], free_over[g], dmin[g], dbp[g]
            )
            without = merchant_cost(
                sub[mo] - a, units[mo] - q, base[g], extra[g], free_over[g], dmin[g], dbp[g]
            )
            best_delta = 0
            best = -1
            for o in range(lo, hi):
                if o == cur:
                    continue
                mn = m0 + offer_merchant[o]
                h = merch_row[mn]
                if mn == mo:
                    sub_new = sub[mo] - a + offer_amount[o]
                    cost_new = merchant_cost(
                        sub_new, units[mo], base[g], extra[g], free_over[g], dmin[g], dbp[g]
                    )
                    delta = cost_new - before
                else:
                    sub_new = sub[mn] + offer_amount[o]
                    fr = free_over[h]
                    cost_new = merchant_cost(
                        sub_new, units[mn] + q, base[h], extra[h], fr, dmin[h], dbp[h]
                    )
                    cost_old = merchant_cost(
                        sub[mn], units[mn], base[h], extra[h], fr, dmin[h], dbp[h]
                    )
                    delta = without - before + cost_new - cost_old
                if delta < best_delta:
                    best_delta = delta
                    best = o
            if best >= 0:
                mn = m0 + offer_merchant[best]
                sub[mo] -= a
                units[mo] -= q
                sub[mn] += offer_amount[best]
                units[mn] += q
                choice[line] = best
                total += best_delta
                moved = True
        if not moved:
            break
    return total


@numba.njit(cache=True)
def fixed_fee(cap, base_fee, free_over):
    """The fixed cost merchant ``m`` adds when it ships, in the facility-location bound
    (see the module): its base fee when its offers (sum ``cap``) cannot reach the threshold,
    else ``min(base, threshold)`` paid off along the goods (0 for huge values, where the
    products below could overflow: a weaker bound, never a wrong one)."""
    if free_over < 0 or cap < free_over:
        return base_fee
    if free_over == 0 or free_over >= SAFE or base_fee >= SAFE:
        return 0
    return min(base_fee, free_over)


@numba.njit(cache=True)
def line_cost(lb, qty, cap, base_fee, per_extra_unit, free_over):
    """A line's cost at merchant ``m`` in the facility-location bound: its least goods
    ``lb`` plus its extra units' fees when ``m`` never ships free here, else ``lb`` less the
    share of ``fixed_fee`` it pays off (``lb * fee / threshold``, rounded up)."""
    if free_over < 0 or cap < free_over:
        return lb + per_extra_unit * (qty - 1)
    fee = fixed_fee(cap, base_fee, free_over)
    if fee == 0:
        return lb
    return lb - ((lb // free_over) * fee + ((lb % free_over) * fee + free_over - 1) // free_over)


@numba.njit(cache=True)
def least_goods(o, m, offer_amount, cap_units, disc_min_units, disc_bp):
    """``lb_offer`` of offer ``o`` at merchant ``m``, without the discount when all of
    ``m``'s offers in the cart hold fewer units than it needs."""
    if cap_units[m] < disc_min_units:
        return offer_amount[o]
    return lb_offer(offer_amount[o], disc_min_units, disc_bp)


@numba.njit(cache=True)
def keep_offer(o, kept, offer_merchant, offer_amount):
    """Offer ``o`` moved to slot ``kept`` of its line (the kept offers come first; the offer
    there goes to ``o``'s slot)."""
    if o != kept:
        om, oa = offer_merchant[o], offer_amount[o]
        offer_merchant[o] = offer_merchant[kept]
        offer_amount[o] = offer_amount[kept]
        offer_merchant[kept] = om
        offer_amount[kept] = oa


@numba.njit(cache=True)
def prune_round(
    bound, l0, n, m0, n_merch, offer_ptr, offer_end, offer_merchant, offer_amount, line_qty,
    merch_row, base, extra, free_over, dmin, dbp, cap, cap_units, slack, line_v,
):  # fmt: skip
    """One round of the offer bounds against ``bound`` over each line's kept offers
    (``offer_ptr[line] .. offer_end[line] - 1``), partitioning the kept ones first; ``cap``,
    ``cap_units``, ``slack`` are scratch per packed merchant, ``line_v`` per line. Returns the
    number of offers dropped."""
    for m in range(m0, m0 + n_merch):
        cap[m] = 0
        cap_units[m] = 0
    for line in range(l0, l0 + n):
        for o in range(offer_ptr[line], offer_end[line]):
            m = m0 + offer_merchant[o]
            cap[m] += offer_amount[o]
            cap_units[m] += line_qty[line]
    # The simple bound's sum of least goods, and the facility-location dual (one greedy pass:
    # each line's value raised until a merchant's fixed fee is used up).
    lb0 = 0
    for m in range(m0, m0 + n_merch):
        g = merch_row[m]
        slack[m] = fixed_fee(cap[m], base[g], free_over[g])
    total_v = 0
    for line in range(l0, l0 + n):
        q = line_qty[line]
        least = INF
        v = INF
        for o in range(offer_ptr[line], offer_end[line]):
            m = m0 + offer_merchant[o]
            g = merch_row[m]
            lb = least_goods(o, m, offer_amount, cap_units, dmin[g], dbp[g])
            least = min(least, lb)
            v = min(v, line_cost(lb, q, cap[m], base[g], extra[g], free_over[g]) + slack[m])
        for o in range(offer_ptr[line], offer_end[line]):
            m = m0 + offer_merchant[o]
            g = merch_row[m]
            lb = least_goods(o, m, offer_amount, cap_units, dmin[g], dbp[g])
            slack[m] -= max(0, v - line_cost(lb, q, cap[m], base[g], extra[g], free_over[g]))
        lb0 += least
        total_v += v
        line_v[line] = v
    dropped = 0
    for line in range(l0, l0 + n):
        lo = offer_ptr[line]
        hi = offer_end[line]
        if hi - lo < 2:
            continue
        q = line_qty[line]
        v = line_v[line]
        least = INF
        for o in range(lo, hi):
            m = m0 + offer_merchant[o]
            g = merch_row[m]
            least = min(least, least_goods(o, m, offer_amount, cap_units, dmin[g], dbp[g]))
        kept = lo
        for o in range(lo, hi):
            m = m0 + offer_merchant[o]
            g = merch_row[m]
            lb = least_goods(o, m, offer_amount, cap_units, dmin[g], dbp[g])
            simple = lb0 - least + lb + must_fee(cap[m], q, base[g], extra[g], free_over[g])
            cost = line_cost(lb, q, cap[m], base[g], extra[g], free_over[g])
            dual = total_v + slack[m] + max(0, cost - v)
            if simple <= bound and dual <= bound:
                keep_offer(o, kept, offer_merchant, offer_amount)
                kept += 1
        dropped += hi - kept
        offer_end[line] = kept
    return dropped


@numba.njit(cache=True)
def unpruned_steps(l0, n, m0, n_merch, offer_ptr, offer_merchant, served):
    """The fewer of the two methods' estimated steps on the whole cart (as
    :func:`gpu_engine.batch.ops.plan_cart` counts them, without its dominance skips, capped
    near ``PRUNE_MIN_STEPS``); ``served`` is scratch per packed merchant."""
    for m in range(m0, m0 + n_merch):
        served[m] = 0
    assignments = 1
    k = 0
    for line in range(l0, l0 + n):
        r = offer_ptr[line + 1] - offer_ptr[line]
        if assignments <= PRUNE_MIN_STEPS:
            assignments *= r
        if r > 1:
            k += 1
            for o in range(offer_ptr[line], offer_ptr[line + 1]):
                served[m0 + offer_merchant[o]] += 1
    full = min(assignments, PRUNE_MIN_STEPS + 1) * n
    if k > 20:
        return full
    dp = 0
    for m in range(m0, m0 + n_merch):
        a = served[m]
        dp += (1 << k) + (1 << a) + ((1 << k) >> a) * 3**a
    return min(full, dp)


@numba.njit(cache=True)
def fee_shares(
    l0, n, m0, n_merch, offer_ptr, offer_end, offer_merchant, offer_amount, merch_row,
    base, free_over, cap, count, share,
):  # fmt: skip
    """Per merchant of the cart, over its kept offers: ``share[m]`` its base fee spread over
    the lines it could take (``base // lines``) when those offers cannot reach its
    free-shipping threshold, else -1 (it may ship free). Whichever ``L`` of its lines it
    ships, it pays ``base``, at least ``L * share``, so ``share`` (plus the line's extra
    units' fee) may be charged to every line it ships in a lower bound. ``cap``/``count``
    are scratch per packed merchant."""
    for m in range(m0, m0 + n_merch):
        cap[m] = 0
        count[m] = 0
    for line in range(l0, l0 + n):
        for o in range(offer_ptr[line], offer_end[line]):
            m = m0 + offer_merchant[o]
            cap[m] += offer_amount[o]
            count[m] += 1
    for m in range(m0, m0 + n_merch):
        g = merch_row[m]
        if count[m] == 0 or (free_over[g] >= 0 and cap[m] >= free_over[g]):
            share[m] = -1
        else:
            share[m] = base[g] // count[m]


@numba.njit(cache=True)
def line_share(lb, qty, share, per_extra_unit):
    """A line's least charge at a merchant: its least goods ``lb``, plus, where the merchant
    never ships free here (``share >= 0``), its extra units' fee and its share of the base."""
    if share < 0:
        return lb
    return lb + per_extra_unit * (qty - 1) + share


@numba.njit(cache=True)
def prune_by_shares(
    bound, l0, n, m0, n_merch, offer_ptr, offer_end, offer_merchant, offer_amount, line_qty,
    merch_row, base, extra, free_over, dmin, dbp, cap, count, share,
):  # fmt: skip
    """The shared-fee bound: every assignment costs at least the sum over lines of their
    least charge (:func:`line_share`) at their merchant, so one putting line ``l`` at offer
    ``o`` costs at least the other lines' least charges plus ``o``'s; offers above ``bound``
    leave (swapped behind the kept ones, whose order stays). ``share`` ends holding
    :func:`fee_shares` of the offers kept. Returns the number dropped."""
    fee_shares(
        l0, n, m0, n_merch, offer_ptr, offer_end, offer_merchant, offer_amount, merch_row,
        base, free_over, cap, count, share,
    )  # fmt: skip
    lb0 = 0
    for line in range(l0, l0 + n):
        q = line_qty[line]
        least = INF
        for o in range(offer_ptr[line], offer_end[line]):
            m = m0 + offer_merchant[o]
            g = merch_row[m]
            lb = lb_offer(offer_amount[o], dmin[g], dbp[g])
            least = min(least, line_share(lb, q, share[m], extra[g]))
        lb0 += least
    dropped = 0
    for line in range(l0, l0 + n):
        lo = offer_ptr[line]
        hi = offer_end[line]
        if hi - lo < 2:
            continue
        q = line_qty[line]
        least = INF
        for o in range(lo, hi):
            m = m0 + offer_merchant[o]
            g = merch_row[m]
            lb = lb_offer(offer_amount[o], dmin[g], dbp[g])
            least = min(least, line_share(lb, q, share[m], extra[g]))
        kept = lo
        for o in range(lo, hi):
            m = m0 + offer_merchant[o]
            g = merch_row[m]
            lb = lb_offer(offer_amount[o], dmin[g], dbp[g])
            if lb0 - least + line_share(lb, q, share[m], extra[g]) <= bound:
                keep_offer(o, kept, offer_merchant, offer_amount)
                kept += 1
        dropped += hi - kept
        offer_end[line] = kept
    if dropped > 0:  # the shares of what is left
        fee_shares(
            l0, n, m0, n_merch, offer_ptr, offer_end, offer_merchant, offer_amount, merch_row,
            base, free_over, cap, count, share,
        )  # fmt: skip
    return dropped


def prune_cart(
    c, line_ptr, line_qty, offer_ptr, offer_merchant, offer_amount, merch_ptr, merch_row,
    base, extra, free_over, dmin, dbp, enabled, sub, units, slack, line_v, offer_end, bound,
):  # fmt: skip
    """Cart ``c``'s offers that can be in an optimal assignment first in each line, up to
    ``offer_end[line]`` (every offer when ``enabled`` is 0; 1 prunes carts whose unpruned
    steps pass ``PRUNE_MIN_STEPS``, :data:`PRUNE_ALWAYS` every cart), and ``bound[c]`` the
    exact total of an assignment (``INF`` when not pruned); ``sub``, ``units``, ``slack``
    are scratch per packed merchant, ``line_v`` per line. ``slack`` ends holding the
    merchants' fee shares (:func:`fee_shares` of the kept offers; -1 when not pruned) for
    the DP's bounds. See the module docstring."""
    l0 = line_ptr[c]
    n = line_ptr[c + 1] - l0
    m0 = merch_ptr[c]
    n_merch = merch_ptr[c + 1] - m0
    for m in range(m0, m0 + n_merch):
        slack[m] = -1
    bound[c] = INF
    for line in range(l0, l0 + n):
        offer_end[line] = offer_ptr[line + 1]
    if enabled == 0:
        return
    if enabled != PRUNE_ALWAYS and (
        unpruned_steps(l0, n, m0, n_merch, offer_ptr, offer_merchant, sub) <= PRUNE_MIN_STEPS
    ):
        return
    no_choice = offer_end[l0:l0]
    best = INF
    best_pref = -1
    for pref in range(-1, n_merch):
        total = price_preferred(
            pref, l0, n, m0, n_merch, offer_ptr, offer_merchant, offer_amount, line_qty,
            merch_row, base, extra, free_over, dmin, dbp, sub, units, no_choice,
        )  # fmt: skip
        if total < best:
            best = total
            best_pref = pref
    # offer_end holds the incumbent's offers while the local search runs.
    best = price_preferred(
        best_pref, l0, n, m0, n_merch, offer_ptr, offer_merchant, offer_amount, line_qty,
        merch_row, base, extra, free_over, dmin, dbp, sub, units, offer_end,
    )  # fmt: skip
    upper = improve(
        best, l0, n, m0, offer_ptr, offer_merchant, offer_amount, line_qty, merch_row,
        base, extra, free_over, dmin, dbp, sub, units, offer_end,
    )  # fmt: skip
    for line in range(l0, l0 + n):
        offer_end[line] = offer_ptr[line + 1]
    for _ in range(MAX_ROUNDS):
        dropped = prune_round(
            upper, l0, n, m0, n_merch, offer_ptr, offer_end, offer_merchant, offer_amount,
            line_qty, merch_row, base, extra, free_over, dmin, dbp, sub, units, slack, line_v,
        )  # fmt: skip
        dropped += prune_by_shares(
            upper, l0, n, m0, n_merch, offer_ptr, offer_end, offer_merchant, offer_amount,
            line_qty, merch_row, base, extra, free_over, dmin, dbp, sub, units, slack,
        )  # fmt: skip
        if dropped == 0:
            break
    bound[c] = upper
