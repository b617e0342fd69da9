"""The GA's pricing operations for version 2 carts (fulfillment nodes, weight tiers), written
once for both devices.

A gene is a *column* (one node of one merchant). A child's state is two int64 tables:
``cst[4, C]`` per column (``S_SUB`` subtotal, ``S_UNITS``, ``S_GRAMS``, ``S_FEE`` its parcel's
fee) and ``ost[4, O]`` per owning merchant (``S_SUB``, ``S_UNITS``, ``S_PARCELS`` the summed
fees of its parcels, ``S_COST`` its cost); the total is the sum of ``ost[S_COST]``. Moving a line
from column ``a`` to ``b`` changes two parcels and one or two owners (their thresholds and
discounts count every node), and every delta here prices exactly that: the same owner's terms
see both parcels change at once.

Problem arrays: ``qty``/``wgt`` int64[n] (units, grams a unit); ``price`` int64[n, C];
``cand``/``cnt`` as in :mod:`.ops`; ``colp`` int64[5, C] (``C_BASE``, ``C_PER``, ``C_OWNER``,
``C_TIERS`` tier count, ``C_PER_KG``); ``tier_up``/``tier_fee`` int64[C, T]; ``ownp`` int64[3, O]
(``O_FREE`` free over or -1, ``O_DMIN`` discount units or 0, ``O_DBP`` basis points).

The functions are plain Python compiled twice by :func:`twins` (``numba.njit`` for the CPU twin,
``cuda.jit(device=True)`` for the kernels). Unlike :mod:`.ops` they call each other: :func:`twins`
binds each name to its compiled twin. Pricing is :func:`gpu_engine.pricing.parcel_fee` and
:func:`gpu_engine.pricing.owner_cost`, the one formula; the kernels get ``parcel_fee`` (and the
``weight_fee`` it calls) compiled from the same source by ``cuda.jit``, because it takes a
column's tier rows (arrays), which the simulator cannot pass to an njit function.
"""

from __future__ import annotations

import types

from gpu_engine.cuda_ops.order import lower_first as better
from gpu_engine.pricing import owner_cost, parcel_fee

C_BASE, C_PER, C_OWNER, C_TIERS, C_PER_KG = 0, 1, 2, 3, 4
N_COLP = 5
O_FREE, O_DMIN, O_DBP = 0, 1, 2
N_OWNP = 3
S_SUB, S_UNITS, S_GRAMS, S_FEE = 0, 1, 2, 3
S_PARCELS, S_COST = 2, 3
N_STATE = 4
NO_MOVE = -1


def twins(functions, jit, bound=None):
    """``{name: jit(function)}`` for ``functions`` (in call order: a function's callees come
    before it), each compiled with the names of the earlier ones (and of ``bound``) bound to
    their compiled twins."""
    names = dict(bound or {})
    for f in functions:
        scope = {**f.__globals__, **names}
        copy = types.FunctionType(f.__code__, scope, f.__name__, f.__defaults__, f.__closure__)
        copy.__qualname__ = f.__qualname__
        copy.__module__ = f.__module__
        copy.__doc__ = f.__doc__
        names[f.__name__] = jit(copy)
    return names


# --- pricing of one column / one owner --------------------------------------------------------


def column_fee(c, units, grams, colp, tier_up, tier_fee):
    """Column ``c``'s parcel fee for ``units`` units weighing ``grams`` (0 when empty)."""
    return parcel_fee(
        units,
        grams,
        colp[C_BASE, c],
        colp[C_PER, c],
        tier_up[c],
        tier_fee[c],
        colp[C_TIERS, c],
        colp[C_PER_KG, c],
    )


def owner_total(o, sub, units, parcels, ownp):
    """Owner ``o``'s cost for goods ``sub``, ``units`` units and parcels costing ``parcels``."""
    return owner_cost(sub, units, parcels, ownp[O_FREE, o], ownp[O_DMIN, o], ownp[O_DBP, o])


def add_delta(i, b, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost):
    """The change of the total if line ``i`` joined column ``b`` (leaving nothing)."""
    q = qty[i]
    fee = column_fee(b, cst[S_UNITS, b] + q, cst[S_GRAMS, b] + q * wgt[i], colp, tier_up, tier_fee)
    o = colp[C_OWNER, b]
    after = owner_total(
        o,
        ost[S_SUB, o] + q * price[i, b],
        ost[S_UNITS, o] + q,
        ost[S_PARCELS, o] - cst[S_FEE, b] + fee,
        ownp,
    )
    return after - ost[S_COST, o]


def move_delta(i, b, child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost):
    """The exact change of the total if line ``i`` moved from its column to ``b`` (another):
    both parcels change; one owner's terms see both when ``b`` is a node of the same merchant."""
    a = child[i]
    q = qty[i]
    g = q * wgt[i]
    fee_a = column_fee(a, cst[S_UNITS, a] - q, cst[S_GRAMS, a] - g, colp, tier_up, tier_fee)
    fee_b = column_fee(b, cst[S_UNITS, b] + q, cst[S_GRAMS, b] + g, colp, tier_up, tier_fee)
    oa = colp[C_OWNER, a]
    ob = colp[C_OWNER, b]
    out = q * price[i, a]
    into = q * price[i, b]
    if oa == ob:
        parcels = ost[S_PARCELS, oa] - cst[S_FEE, a] + fee_a - cst[S_FEE, b] + fee_b
        after = owner_total(oa, ost[S_SUB, oa] - out + into, ost[S_UNITS, oa], parcels, ownp)
        return after - ost[S_COST, oa]
    after_a = owner_total(
        oa,
        ost[S_SUB, oa] - out,
        ost[S_UNITS, oa] - q,
        ost[S_PARCELS, oa] - cst[S_FEE, a] + fee_a,
        ownp,
    )
    after_b = owner_total(
        ob,
        ost[S_SUB, ob] + into,
        ost[S_UNITS, ob] + q,
        ost[S_PARCELS, ob] - cst[S_FEE, b] + fee_b,
        ownp,
    )
    return after_a - ost[S_COST, oa] + after_b - ost[S_COST, ob]


def column_shift(i, c, sign, qty, wgt, price, colp, tier_up, tier_fee, cst, ost):
    """Line ``i`` leaves (``sign`` -1) or joins (+1) column ``c``: its parcel and its owner's
    sums follow; the owner's cost is the caller's."""
    o = colp[C_OWNER, c]
    q = sign * qty[i]
    amount = q * price[i, c]
    cst[S_SUB, c] += amount
    cst[S_UNITS, c] += q
    cst[S_GRAMS, c] += q * wgt[i]
    fee = column_fee(c, cst[S_UNITS, c], cst[S_GRAMS, c], colp, tier_up, tier_fee)
    ost[S_SUB, o] += amount
    ost[S_UNITS, o] += q
    ost[S_PARCELS, o] += fee - cst[S_FEE, c]
    cst[S_FEE, c] = fee


def shift_line(i, a, b, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost):
    """Move line ``i`` from column ``a`` to ``b`` in the state only (the chromosome is the
    caller's); returns the change of the total."""
    oa = colp[C_OWNER, a]
    ob = colp[C_OWNER, b]
    before = ost[S_COST, oa]
    if ob != oa:
        before += ost[S_COST, ob]
    column_shift(i, a, -1, qty, wgt, price, colp, tier_up, tier_fee, cst, ost)
    column_shift(i, b, 1, qty, wgt, price, colp, tier_up, tier_fee, cst, ost)
    ost[S_COST, oa] = owner_total(oa, ost[S_SUB, oa], ost[S_UNITS, oa], ost[S_PARCELS, oa], ownp)
    after = ost[S_COST, oa]
    if ob != oa:
        ost[S_COST, ob] = owner_total(
            ob, ost[S_SUB, ob], ost[S_UNITS, ob], ost[S_PARCELS, ob], ownp
        )
        after += ost[S_COST, ob]
    return after - before


def move_line(i, b, child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost):
    """Move line ``i`` to column ``b`` (state and chromosome); returns the change of the total."""
    delta = shift_line(i, child[i], b, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost)
    child[i] = b
    return delta


# --- strided ranges (see :mod:`.ops`) ----------------------------------------------------------


def column_sums(start, step, child, qty, wgt, price, cst):
    """The range's lines added into ``cst`` (sequential callers; the kernels use atomics)."""
    for i in range(start, child.size, step):
        c = child[i]
        cst[S_SUB, c] += qty[i] * price[i, c]
        cst[S_UNITS, c] += qty[i]
        cst[S_GRAMS, c] += qty[i] * wgt[i]


def column_fees(start, step, colp, tier_up, tier_fee, cst):
    """``cst[S_FEE, c]`` for the range's columns."""
    for c in range(start, colp.shape[1], step):
        cst[S_FEE, c] = column_fee(c, cst[S_UNITS, c], cst[S_GRAMS, c], colp, tier_up, tier_fee)


def owner_costs(start, step, ownp, ost):
    """``ost[S_COST, o]`` for the range's owners; returns their sum."""
    total = 0
    for o in range(start, ownp.shape[1], step):
        ost[S_COST, o] = owner_total(o, ost[S_SUB, o], ost[S_UNITS, o], ost[S_PARCELS, o], ownp)
        total += ost[S_COST, o]
    return total


def removals(start, step, child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost, removal):
    """``removal[i]`` for the range's lines: the change of the total if line i left its
    column (and was bought nowhere)."""
    for i in range(start, child.size, step):
        a = child[i]
        q = qty[i]
        fee = column_fee(
            a, cst[S_UNITS, a] - q, cst[S_GRAMS, a] - q * wgt[i], colp, tier_up, tier_fee
        )
        o = colp[C_OWNER, a]
        after = owner_total(
            o,
            ost[S_SUB, o] - q * price[i, a],
            ost[S_UNITS, o] - q,
            ost[S_PARCELS, o] - cst[S_FEE, a] + fee,
            ownp,
        )
        removal[i] = after - ost[S_COST, o]


def scan_pairs(
    start, step, child, removal, qty, wgt, price, cand, cnt, colp, tier_up, tier_fee, ownp, cst, ost
):
    """Best improving single-line move among the range's (line, slot) pairs (:mod:`.ops`): the
    removal and the addition are separable between two owners; a move between two nodes of one
    merchant is priced jointly (:func:`move_delta`)."""
    width = cand.shape[1]
    best_delta = 0
    best_pair = NO_MOVE
    for pair in range(start, child.size * width, step):
        i = pair // width
        k = pair - i * width
        if k >= cnt[i]:
            continue
        b = cand[i, k]
        a = child[i]
        if b == a:
            continue
        if colp[C_OWNER, b] == colp[C_OWNER, a]:
            delta = move_delta(
                i, b, child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost
            )
        else:
            delta = removal[i] + add_delta(
                i, b, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost
            )
        if delta < 0 and better(delta, pair, best_delta, best_pair):
            best_delta = delta
            best_pair = pair
    return best_delta, best_pair


def close_lines(
    start, step, u, child, qty, wgt, price, cand, cnt, colp, tier_up, tier_fee, ownp, cst, ost
):
    """The range's lines at column ``u`` move to the candidate that costs least to add them to
    (first slot on ties), judged on the state before any line moves (:func:`.ops.close_lines`)."""
    for i in range(start, child.size, step):
        if child[i] != u:
            continue
        best_delta = 0
        best_b = -1
        for k in range(cnt[i]):
            b = cand[i, k]
            if b == u:
                continue
            delta = add_delta(i, b, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost)
            if best_b < 0 or delta < best_delta:
                best_delta = delta
                best_b = b
        if best_b >= 0:
            child[i] = best_b


def grow_scan(m, count, order, child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost):
    """Best prefix length of the growth ``order`` (:func:`.ops.grow_scan`), each line shifted
    to column ``m`` in turn and priced exactly; the state ends as if the whole order had moved
    (the caller re-aggregates)."""
    best_gain = 0
    best_len = -1
    gain = 0
    for r in range(count):
        i = order[r]
        gain += shift_line(i, child[i], m, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost)
        if best_len < 0 or gain < best_gain:
            best_gain = gain
            best_len = r + 1
    return best_gain, best_len


# In call order, for :func:`twins`.
FUNCTIONS = (
    column_fee,
    owner_total,
    add_delta,
    move_delta,
    column_shift,
    shift_line,
    move_line,
    column_sums,
    column_fees,
    owner_costs,
    removals,
    scan_pairs,
    close_lines,
    grow_scan,
)
