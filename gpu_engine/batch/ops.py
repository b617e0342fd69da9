"""The batch solver's per-cart steps, written once for both devices.

Plain Python compiled twice: ``numba.njit`` in :mod:`gpu_engine.batch.cpu` (one cart per
``prange`` iteration, each step called with ``start, step = 0, 1``) and
``cuda.jit(device=True)`` in :mod:`gpu_engine.batch.cuda` (one block per cart, thread ``t`` of
``T`` calls the strided steps with ``t, T`` and so owns assignments, cost-table entries or line
sets ``t, t + T, ...``). Like :mod:`gpu_engine.solvers.ga.ops`, they call only the scalar pricing
routine (:func:`gpu_engine.pricing.merchant_cost`) and the pruning's helpers
(:func:`gpu_engine.batch.prune.lb_offer`; ``relax_min`` and ``bump``, which the CUDA twin binds
to atomics), never each other.

The subset DP runs one of two ways per cart. Dense (no bound: pruning off, or money too large
for the keys): every line set of every merchant's layer pulled from the layer before. Pushed
(the plan's ``bound``, an assignment's exact total): each layer starts from the list of sets
the layer before reached, keeps those whose cost plus what the merchants still to run must
charge stays within the bound, and pushes them forward (:func:`push_layer`); a layer touches
its reached sets, not all ``2^k``.

A cart is a slice of the packed CSR arrays (:mod:`gpu_engine.batch.pack`): its lines are
``l0 .. l0 + n - 1``; line ``l``'s offers still in play are ``offer_ptr[l] .. offer_end[l] - 1``
(the plan's pruning, :mod:`gpu_engine.batch.prune`, moved those that can be in no optimal
assignment behind ``offer_end[l]``; ``offer_merchant``: the cart-local merchant,
``offer_amount``: quantity * unit price);
merchant ``m``'s pricing parameters are ``base[g] .. dbp[g]`` with ``g = merch_row[m0 + m]``.
The cart's *free* lines are those with two or more offers, numbered 0, 1, ... in line order:
bit ``j`` of a line set is free line ``j``.
"""

from __future__ import annotations

from gpu_engine.batch.prune import bump, lb_offer, relax_min
from gpu_engine.pricing import merchant_cost

INF = 2**62
# A pushed DP key is cost * KEY + compressed subset (below 2^16): exact while the cart's
# bound stays below KEY_LIMIT (keys below INF); larger carts take the dense layers.
KEY = 1 << 16
KEY_LIMIT = 1 << 45
# The dense DP estimate over the pushed DP's steps on pruned carts (see plan_cart).
PUSHED_DP_SHARE = 16
# rest_tables: free lines in groups of four, a table of the 16 subsets' sums per group (up to
# MAX_DP_LINES lines); sums capped well above any bound and below int64 overflow.
REST_CHUNK_BITS = 4
REST_CHUNK_SETS = 16
REST_CHUNKS = 4
REST_TABLES = REST_CHUNKS * REST_CHUNK_SETS
REST_CAP = 2**60
# A DP cart's int64 scratch, in tables of 2^k: two layers, the cost table and the lists of
# the sets each layer reached (:func:`push_layer`).
DP_TABLES = 5
# The dense layers need the two layers and the cost table only.
DENSE_TABLES = 3


def full_search(
    start,
    step,
    l0,
    n,
    complexity,
    offer_ptr,
    offer_end,
    offer_merchant,
    offer_amount,
    line_qty,
    m0,
    merch_row,
    base,
    extra,
    free_over,
    dmin,
    dbp,
    choice,
):
    """Cheapest (total, index) over assignment indexes ``start, start + step, ...`` below
    ``complexity``; lowest index on ties. Index ``i`` numbers the assignments in mixed radix,
    the last line fastest (digit = offer rank within the line). ``choice`` is scratch of n
    offer indexes. Each assignment is priced from scratch: a merchant's subtotal and units are
    summed over the lines that chose it, once, at its first line."""
    best = INF
    best_index = -1
    for index in range(start, complexity, step):
        rest = index
        for i in range(n - 1, -1, -1):
            line = l0 + i
            radix = offer_end[line] - offer_ptr[line]
            choice[i] = offer_ptr[line] + rest % radix
            rest //= radix
        total = 0
        for i in range(n):
            m = offer_merchant[choice[i]]
            first = True
            for j in range(i):
                if offer_merchant[choice[j]] == m:
                    first = False
                    break
            if not first:
                continue
            sub = 0
            units = 0
            for j in range(i, n):
                o = choice[j]
                if offer_merchant[o] == m:
                    sub += offer_amount[o]
                    units += line_qty[l0 + j]
            g = merch_row[m0 + m]
            total += merchant_cost(sub, units, base[g], extra[g], free_over[g], dmin[g], dbp[g])
        if total < best:
            best = total
            best_index = index
    return best, best_index


def decode_full(index, l0, n, offer_ptr, offer_end, offer_merchant, out_choice):
    """Write the cart-local merchant of every line of assignment ``index`` to ``out_choice``."""
    rest = index
    for i in range(n - 1, -1, -1):
        line = l0 + i
        radix = offer_end[line] - offer_ptr[line]
        out_choice[line] = offer_merchant[offer_ptr[line] + rest % radix]
        rest //= radix


def merchant_lines(
    m, l0, n, offer_ptr, offer_end, offer_merchant, offer_amount, line_qty, bits, amounts, units
):
    """Merchant ``m``'s part of the cart: its free lines (``bits[b]``: the free-line number of
    its ``b``-th one, with ``amounts[b]`` and ``units[b]``) and the forced lines (one offer)
    that only it sells, folded into a starting subtotal and unit count.
    Returns (a, line-set mask of its free lines, start subtotal, start units)."""
    a = 0
    mask = 0
    sub0 = 0
    units0 = 0
    free = 0
    for i in range(n):
        line = l0 + i
        lo = offer_ptr[line]
        hi = offer_end[line]
        for o in range(lo, hi):
            if offer_merchant[o] == m:
                if hi - lo == 1:
                    sub0 += offer_amount[o]
                    units0 += line_qty[line]
                else:
                    bits[a] = free
                    amounts[a] = offer_amount[o]
                    units[a] = line_qty[line]
                    mask |= 1 << free
                    a += 1
                break
        if hi - lo > 1:
            free += 1
    return a, mask, sub0, units0


def cost_table(
    start, step, a, sub0, units0, amounts, units, g, base, extra, free_over, dmin, dbp, cost
):
    """``cost[tc]`` for the range's compressed subsets ``tc`` of the merchant's ``a`` free lines
    (bit ``b`` = its ``b``-th line), its forced lines included."""
    for tc in range(start, 1 << a, step):
        sub = sub0
        unit = units0
        for b in range(a):
            if (tc >> b) & 1:
                sub += amounts[b]
                unit += units[b]
        cost[tc] = merchant_cost(sub, unit, base[g], extra[g], free_over[g], dmin[g], dbp[g])


def compress(x, a, bits):
    """The compressed twin of line set ``x`` for a merchant with free lines ``bits[:a]``."""
    c = 0
    for b in range(a):
        if (x >> bits[b]) & 1:
            c |= 1 << b
    return c


def fill_layer(start, step, size, h):
    """The DP's layer before any merchant: only the empty line set is reachable (cost 0)."""
    for s in range(start, size, step):
        h[s] = 0 if s == 0 else INF


def rest_lines(
    m, l0, n, m0, offer_ptr, offer_end, offer_merchant, offer_amount, line_qty, merch_row,
    extra, dmin, dbp, skip, fee_share, rest,
):  # fmt: skip
    """What the merchants after ``m`` (those the DP still has to run) must at least charge:
    ``rest[j]`` the least charge of free line ``j`` at one of them (``INF`` if none sells
    it): its least goods (:func:`gpu_engine.batch.prune.lb_offer`), plus the extra units'
    fee and the merchant's ``fee_share`` where it never ships free
    (:func:`gpu_engine.batch.prune.fee_shares`); returns the same summed over the forced
    lines whose one merchant comes after ``m``."""
    forced = 0
    free = 0
    for i in range(n):
        line = l0 + i
        lo = offer_ptr[line]
        hi = offer_end[line]
        least = INF
        for o in range(lo, hi):
            mm = offer_merchant[o]
            if mm > m and skip[m0 + mm] == 0:
                g = merch_row[m0 + mm]
                charge = lb_offer(offer_amount[o], dmin[g], dbp[g])
                if fee_share[m0 + mm] >= 0:
                    charge += extra[g] * (line_qty[line] - 1) + fee_share[m0 + mm]
                least = min(least, charge)
        if hi - lo > 1:
            rest[free] = least
            free += 1
        elif least < INF:
            forced += least
    return forced


def clear_costs(start, step, a, cost):
    """The pushed layer's cost table before any push: no entry priced yet (-1)."""
    for tc in range(start, 1 << a, step):
        cost[tc] = -1


def rest_tables(k, rest, tables):
    """The later merchants' least charges (``rest``, per free line) summed over every subset
    of each group of four free lines (capped at ``REST_CAP``): a set's missing lines then cost
    :data:`REST_CHUNKS` lookups, not a pass over its ``k`` lines."""
    for c in range(REST_CHUNKS):
        for nib in range(REST_CHUNK_SETS):
            total = 0
            for b in range(REST_CHUNK_BITS):
                j = c * REST_CHUNK_BITS + b
                if (nib >> b) & 1 and j < k:
                    total = min(total + rest[j], REST_CAP)
            tables[c * REST_CHUNK_SETS + nib] = total


def push_layer(
    start, step, prev, prev_list, prev_count, nxt, nxt_list, counts, nxt_slot,
    mask, a, bits, cost, rest, k, forced_rest, bound,
    sub0, units0, amounts, units, g, base, extra, free_over, dmin, dbp,
):  # fmt: skip
    """One merchant's layer pushed from the line sets of ``prev`` reached so far (the first
    ``prev_count`` of ``prev_list``; entries ``start, start + step, ...``). Set ``s`` (cost
    ``prev[s]``) lives when that cost plus the least the merchants still to run must charge
    for the other lines (``rest``: per free line as :func:`rest_lines` writes it, or its
    :func:`rest_tables` form, :data:`REST_TABLES` entries, which decides alike in fewer steps;
    ``forced_rest``: :func:`rest_lines`) stays within
    ``bound`` (the total of an assignment: no optimal one passes through a set that fails);
    it passes every subset ``t`` of the merchant's lines it lacks to ``s | t`` as the key
    ``cost * KEY + tc`` (``tc`` the compressed ``t``) when the cost stays within ``bound``.
    ``relax_min`` keeps the least key of every set (an atomic minimum on the GPU) and says
    what was there: the push that reaches a set first appends it to ``nxt_list`` (slot
    ``counts[nxt_slot]``, taken by ``bump``). The layer's keys never depend on the order of
    the pushes; the list's order may, and nothing reads that order. The merchant's cost of
    ``tc`` (as :func:`cost_table` prices it) is priced on first use into ``cost`` (cleared
    by :func:`clear_costs`; two threads may price an entry at once and write the same
    value): the layer prices only the subsets its live sets need."""
    for i in range(start, prev_count, step):
        s = prev_list[i]
        v = prev[s]
        if forced_rest > bound - v:
            continue
        total = v + forced_rest
        live = True
        if rest.size == REST_TABLES:
            missing = ~s & ((1 << k) - 1)
            for c in range(REST_CHUNKS):
                part = rest[c * REST_CHUNK_SETS + ((missing >> (c * REST_CHUNK_BITS)) & 15)]
                if part > bound - total:
                    live = False
                    break
                total += part
        else:
            for j in range(k):
                if not (s >> j) & 1:
                    if rest[j] > bound - total:
                        live = False
                        break
                    total += rest[j]
        if not live:
            continue
        free = mask & ~s
        fc = 0
        for b in range(a):
            if (free >> bits[b]) & 1:
                fc |= 1 << b
        t = free
        tc = fc
        while True:
            price = cost[tc]
            if price < 0:
                sub = sub0
                unit = units0
                for b in range(a):
                    if (tc >> b) & 1:
                        sub += amounts[b]
                        unit += units[b]
                price = merchant_cost(sub, unit, base[g], extra[g], free_over[g], dmin[g], dbp[g])
                cost[tc] = price
            value = v + price
            # The push that finds the set unreached lists it.
            if value <= bound and relax_min(nxt, s | t, value * KEY + tc) >= INF:
                nxt_list[bump(counts, nxt_slot)] = s | t
            if tc == 0:
                break
            tc = (tc - 1) & fc
            t = (t - 1) & free


def finish_layer(start, step, nxt, nxt_list, nxt_count, pick, row, prev, prev_list, prev_count):
    """The pushed keys of the sets reached split into each one's cost and its choice
    ``pick[row + s]``; the sets of the layer before (done with) reset to unreached, so its
    buffer serves the layer after."""
    for i in range(start, nxt_count, step):
        s = nxt_list[i]
        key = nxt[s]
        pick[row + s] = key % KEY
        nxt[s] = key // KEY
    for i in range(start, prev_count, step):
        prev[prev_list[i]] = INF


def assign_merchant(m, tc, l0, n, offer_ptr, offer_end, offer_merchant, out_choice):
    """Backtrack step: give merchant ``m`` its free lines in compressed subset ``tc`` and its
    forced lines; returns the line set of the free lines given (to remove from the state)."""
    taken = 0
    free = 0
    b = 0
    for i in range(n):
        line = l0 + i
        lo = offer_ptr[line]
        hi = offer_end[line]
        for o in range(lo, hi):
            if offer_merchant[o] == m:
                if hi - lo == 1:
                    out_choice[line] = m
                else:
                    if (tc >> b) & 1:
                        out_choice[line] = m
                        taken |= 1 << free
                    b += 1
                break
        if hi - lo > 1:
            free += 1
    return taken


# --- the plan (one cart per call: a prange iteration on the CPU, a thread on the GPU) --------

FULL = 0
DP = 1
TOO_LARGE = 2
# Assignment digits live in a per-thread array of this size (full search).
MAX_FULL_LINES = 32
# Compressed subsets are stored as uint16 for the backtrack; line sets index 2^k tables.
MAX_DP_LINES = 16


def dp_tables(bound):
    """How many tables of ``2^k`` a DP cart's int64 scratch holds: the pushed layers' lists
    only where the cart has a bound small enough to push (see :data:`KEY_LIMIT`)."""
    return DP_TABLES if bound < KEY_LIMIT else DENSE_TABLES


def plan_cart(
    c,
    line_ptr,
    line_qty,
    offer_ptr,
    offer_merchant,
    offer_amount,
    merch_ptr,
    merch_row,
    base,
    extra,
    free_over,
    dmin,
    dbp,
    offer_end,
    bound,
    max_work,
    prefer,
    served,
    forced,
    method,
    complexity,
    work,
    ws,
    pick,
    skip,
):
    """Cart ``c``'s exact method (FULL or DP by estimated steps, TOO_LARGE when neither fits
    ``max_work``; ``prefer`` >= 0 takes that method wherever it fits), its steps and scratch
    sizes (``ws``: int64 entries, ``pick``: uint16 entries), and ``skip`` for its merchants
    that sell only one (free) line when another such merchant ships that line alone for no
    more (ties: the lower index stays): moving the line to it never raises the total and
    touches no other merchant, so some optimum never uses them. ``served``/``forced`` are
    scratch per packed merchant (the cart's own entries are reset here). ``offer_end`` and
    ``bound`` are the pruning's (:func:`gpu_engine.batch.prune.prune_cart`): the offers still
    in play, and whether the DP will be pushed (which the estimates reflect)."""
    l0 = line_ptr[c]
    n = line_ptr[c + 1] - l0
    m0 = merch_ptr[c]
    n_merch = merch_ptr[c + 1] - m0
    for j in range(m0, m0 + n_merch):
        served[j] = 0
        forced[j] = 0
        skip[j] = 0
    k = 0
    assignments = 1
    for line in range(l0, l0 + n):
        lo = offer_ptr[line]
        r = offer_end[line] - lo
        if r > 1:
            k += 1
            for o in range(lo, lo + r):
                served[m0 + offer_merchant[o]] += 1
        else:
            forced[m0 + offer_merchant[lo]] += 1
        if assignments <= max_work:
            assignments *= r
    for line in range(l0, l0 + n):
        best = -1
        best_cost = 0
        lo = offer_ptr[line]
        hi = offer_end[line]
        for o in range(lo, hi):
            m = offer_merchant[o]
            if hi - lo < 2 or served[m0 + m] != 1 or forced[m0 + m] != 0:
                continue
            g = merch_row[m0 + m]
            cost = merchant_cost(
                offer_amount[o], line_qty[line], base[g], extra[g], free_over[g], dmin[g], dbp[g]
            )
            if best < 0 or cost < best_cost or (cost == best_cost and m < best):
                if best >= 0:
                    skip[m0 + best] = 1
                best = m
                best_cost = cost
            else:
                skip[m0 + m] = 1
    for m in range(n_merch):
        # A merchant whose offers were all pruned takes no line: no DP layer.
        if served[m0 + m] == 0 and forced[m0 + m] == 0:
            skip[m0 + m] = 1
    chosen = TOO_LARGE
    best_work = max_work + 1
    full_work = assignments * max(n, 1)
    # A pruned cart's DP is pushed from its reached sets (measured on the realistic mix: about
    # a twentieth of the dense steps), while the full search prices each assignment in about
    # n^2 / 2 steps: the estimates that choose between them say so.
    pushed = bound[c] < KEY_LIMIT
    if pushed:
        full_work = assignments * max(n, 1) * max(n, 1) // 2
    if n <= MAX_FULL_LINES and assignments <= max_work and full_work <= max_work:
        chosen = FULL
        best_work = full_work
    ws[c] = 0
    pick[c] = 0
    complexity[c] = 0
    if k <= MAX_DP_LINES:
        size = 1 << k
        dp_work = 0
        for m in range(n_merch):
            if skip[m0 + m] == 0:
                a = served[m0 + m]
                dp_work += size + (1 << a) + (size >> a) * 3**a
        if pushed:
            dp_work = dp_work // PUSHED_DP_SHARE + 1
        fits = dp_work <= max_work
        if fits and (
            prefer == DP or (dp_work < best_work and prefer != FULL) or chosen == TOO_LARGE
        ):
            chosen = DP
            best_work = dp_work
            ws[c] = (DP_TABLES if pushed else DENSE_TABLES) * size
            pick[c] = n_merch * size
    if chosen == FULL:
        complexity[c] = assignments
    method[c] = chosen
    work[c] = best_work if chosen != TOO_LARGE else 0
