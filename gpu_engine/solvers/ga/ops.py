"""The genetic algorithm's operations, written once for both devices.

Each function here is plain Python compiled twice: ``numba.njit`` in
:mod:`gpu_engine.solvers.ga.cpu` and ``cuda.jit(device=True)`` in
:mod:`gpu_engine.solvers.ga.cuda`. Most take a strided range ``start, step``: the CPU twin calls
them once with ``(0, 1)``, and in a kernel thread ``t`` of a block of ``T`` calls them with ``(t,
T)``, so that thread owns lines (or pairs, or merchants) ``t, t + T, ...``. Whatever a range writes
belongs to it alone, and what it reads is not written during the call (a snapshot), so the split
cannot change the result; searches return the range's best by (value, index), which the kernels
then reduce by the same order.

They call only scalar njit helpers (pricing, random numbers), never each other: inside the CUDA
simulator array arguments are Python wrappers that an njit function cannot take, and on the CPU a
call that passes many arrays costs more than the work it does.

Arrays: ``child`` merchant per line; ``qty`` int64[n]; ``price`` int64[n, mc] (-1 = no offer);
``cand`` int32[n, width] / ``cnt`` int32[n]; ``params`` int64[5, mc] (base fee, per extra unit,
free over, discount min units, discount bp); ``sub``/``units``/``mcost``: the child's
per-merchant subtotal, units and cost; ``removal[i]``: the change of line i's merchant's cost if
the line left it.
"""

from __future__ import annotations

from gpu_engine.cuda_ops.order import lower_first as better
from gpu_engine.pricing import merchant_cost
from gpu_engine.solvers.ga.core import NO_CANDIDATE, NO_MOVE, group_bit
from gpu_engine.solvers.ga.rng import rand_below

# --- strided ranges -------------------------------------------------------------------------


def merchant_costs(start, step, sub, units, params, mcost):
    """``mcost[m]`` for the range's merchants; returns their sum."""
    total = 0
    for m in range(start, sub.size, step):
        mcost[m] = merchant_cost(
            sub[m], units[m], params[0, m], params[1, m], params[2, m], params[3, m], params[4, m]
        )
        total += mcost[m]
    return total


def removals(start, step, child, qty, price, params, sub, units, mcost, removal):
    """``removal[i]`` for the range's lines."""
    for i in range(start, child.size, step):
        a = child[i]
        after = merchant_cost(
            sub[a] - qty[i] * price[i, a],
            units[a] - qty[i],
            params[0, a],
            params[1, a],
            params[2, a],
            params[3, a],
            params[4, a],
        )
        removal[i] = after - mcost[a]


def scan_pairs(start, step, child, removal, qty, price, cand, cnt, params, sub, units, mcost):
    """Best improving single-line move among the range's (line, slot) pairs, pair = line *
    width + slot: (delta, pair), or (0, NO_MOVE) when none lowers the total."""
    width = cand.shape[1]
    best_delta = 0
    best_pair = NO_MOVE
    for pair in range(start, child.size * width, step):
        i = pair // width
        k = pair - i * width
        if k >= cnt[i]:
            continue
        b = cand[i, k]
        if b == child[i]:
            continue
        after = merchant_cost(
            sub[b] + qty[i] * price[i, b],
            units[b] + qty[i],
            params[0, b],
            params[1, b],
            params[2, b],
            params[3, b],
            params[4, b],
        )
        delta = removal[i] + after - mcost[b]
        if delta < 0 and better(delta, pair, best_delta, best_pair):
            best_delta = delta
            best_pair = pair
    return best_delta, best_pair


def close_lines(start, step, u, child, qty, price, cand, cnt, params, sub, units, mcost):
    """The range's lines at merchant ``u`` move to the candidate that costs least to add them
    to (first slot on ties), judged on the state before any line moves; lines with no other
    candidate stay."""
    for i in range(start, child.size, step):
        if child[i] != u:
            continue
        best_delta = 0
        best_b = -1
        for k in range(cnt[i]):
            b = cand[i, k]
            if b == u:
                continue
            after = merchant_cost(
                sub[b] + qty[i] * price[i, b],
                units[b] + qty[i],
                params[0, b],
                params[1, b],
                params[2, b],
                params[3, b],
                params[4, b],
            )
            delta = after - mcost[b]
            if best_b < 0 or delta < best_delta:
                best_delta = delta
                best_b = b
        if best_b >= 0:
            child[i] = best_b


def grow_keys(start, step, m, child, removal, qty, price, keys):
    """``keys[i]``: line i's place in merchant ``m``'s growth order (the cost of moving it
    alone, less ``m``'s own change); NO_CANDIDATE when ``m`` cannot take it or has it. Returns
    how many of the range's lines ``m`` could take."""
    count = 0
    for i in range(start, child.size, step):
        if price[i, m] < 0 or child[i] == m:
            keys[i] = NO_CANDIDATE
        else:
            keys[i] = removal[i] + qty[i] * price[i, m]
            count += 1
    return count


def grow_order(start, step, keys, order):
    """``order[r]`` = the line of rank r in (key, line) order, for the range's lines that have
    a key (the order a stable sort gives)."""
    n = keys.size
    for i in range(start, n, step):
        key = keys[i]
        if key == NO_CANDIDATE:
            continue
        rank = 0
        for j in range(n):
            if better(keys[j], j, key, i):
                rank += 1
        order[rank] = i


def grow_scan(m, count, order, child, qty, price, params, sub, units, mcost):
    """Best prefix length (1..count) of the growth ``order``: (gain, length), the lowest gain,
    then the shortest. One thread, in order: each line of the prefix leaves its merchant and
    joins ``m`` in turn, every merchant priced exactly as it stands (a merchant that several
    lines leave can drop below its discount's units or its free-shipping threshold, which the
    lines' single removals do not show: prefixes summed from those can empty a merchant past
    its discount and miss the optimum by far). ``sub``/``units``/``mcost`` end as if the whole
    order had moved: the caller re-aggregates after applying the prefix."""
    best_gain = 0
    best_len = -1
    gain = 0
    for r in range(count):
        i = order[r]
        a = child[i]
        before = mcost[a] + mcost[m]
        sub[a] -= qty[i] * price[i, a]
        units[a] -= qty[i]
        sub[m] += qty[i] * price[i, m]
        units[m] += qty[i]
        mcost[a] = merchant_cost(
            sub[a], units[a], params[0, a], params[1, a], params[2, a], params[3, a], params[4, a]
        )
        mcost[m] = merchant_cost(
            sub[m], units[m], params[0, m], params[1, m], params[2, m], params[3, m], params[4, m]
        )
        gain += mcost[a] + mcost[m] - before
        if best_len < 0 or gain < best_gain:
            best_gain = gain
            best_len = r + 1
    return best_gain, best_len


def grow_apply(start, step, m, length, order, child):
    """The first ``length`` lines of the growth order move to ``m``."""
    for r in range(start, length, step):
        child[order[r]] = m


def crossover_lines(start, step, genes, a, b, cross, mask_draw, child):
    """The range's lines of the child of slots ``a`` and ``b``: the second parent's merchant
    where its whole group is imported (one pseudo-random bit per merchant), else the first's."""
    for i in range(start, child.size, step):
        m = genes[b, i]
        child[i] = m if cross and group_bit(mask_draw, m) else genes[a, i]


def copy_group(start, step, elite, m, child):
    """The range's lines that ``elite`` buys from ``m`` are bought from ``m``."""
    for i in range(start, child.size, step):
        if elite[i] == m:
            child[i] = m


def argmin_range(start, step, values):
    """(lowest value, its index) over the range (ties: the lowest index); (NO_CANDIDATE, -1)
    for an empty range."""
    best = NO_CANDIDATE
    best_k = -1
    for k in range(start, values.size, step):
        if best_k < 0 or better(values[k], k, best, best_k):
            best = values[k]
            best_k = k
    return best, best_k


# --- single steps (one thread) --------------------------------------------------------------


def move_line(i, b, child, qty, price, params, sub, units, mcost):
    """Move line ``i`` to merchant ``b`` (state updated); returns the change of the total."""
    a = child[i]
    before = mcost[a] + mcost[b]
    sub[a] -= qty[i] * price[i, a]
    units[a] -= qty[i]
    mcost[a] = merchant_cost(
        sub[a], units[a], params[0, a], params[1, a], params[2, a], params[3, a], params[4, a]
    )
    sub[b] += qty[i] * price[i, b]
    units[b] += qty[i]
    mcost[b] = merchant_cost(
        sub[b], units[b], params[0, b], params[1, b], params[2, b], params[3, b], params[4, b]
    )
    child[i] = b
    return mcost[a] + mcost[b] - before


def used_target(i, pick_draw, child, cand, cnt, units):
    """A random candidate of line ``i`` the child already uses (not its own merchant); -1 when
    there is none."""
    used = 0
    for k in range(cnt[i]):
        b = cand[i, k]
        if b != child[i] and units[b] > 0:
            used += 1
    if used == 0:
        return -1
    pick = rand_below(pick_draw, used)
    for k in range(cnt[i]):
        b = cand[i, k]
        if b != child[i] and units[b] > 0:
            if pick == 0:
                return b
            pick -= 1
    return -1


def tournament(draws, offset, size, fitness):
    """The fittest of ``size`` random slots (ties: the earlier draw)."""
    n_slots = fitness.size
    winner = rand_below(draws[offset], n_slots)
    for t in range(1, size):
        challenger = rand_below(draws[offset + t], n_slots)
        if fitness[challenger] < fitness[winner]:
            winner = challenger
    return winner
