"""The genetic algorithm on the CPU (numba): the twin of :mod:`gpu_engine.solvers.ga.cuda`.

The element operations of :mod:`gpu_engine.solvers.ga.ops` are compiled here with ``numba.njit``;
this module runs them in plain loops where the kernels spread them over a block's threads. Every
per-line decision reads a snapshot of the merchant state, and every search keeps the lowest
index on ties, so the sequential loops here and the parallel ones there agree bit for bit: given
the seed, the configuration and the number of generations, both devices end with the same
population.

Where a kernel's block builds one slot's child (or tries one elite move), the functions here
take a range of slots (or moves), ``[lo, hi)``: :class:`gpu_engine.solvers.ga.solve.CpuPopulation`
hands the ranges to threads in chunks (:mod:`gpu_engine.solvers.ga.workers`, ``nogil``) and
stops between chunks at the deadline. A slot reads only the previous generation and writes only
its own row and random state, so the split over threads changes nothing.

A child under construction is ``child`` (compact merchant per line) with its per-merchant state
``sub`` (subtotal), ``units`` and ``mcost`` (cost); its total is the sum of ``mcost``.

Moves, used by children (as mutations) and by the elite pass:

* *descent*: best single-line moves (lowest delta, then lowest line * width + slot) while one
  lowers the total.
* *close* merchant ``u``: each of its lines goes to the candidate that costs least to add it to.
* *grow* merchant ``m``: the lines ``m`` could take, ordered by the cost of moving each alone;
  the prefix of that order with the best estimated gain (at least one line) moves to ``m``. It is
  the move that reaches a free-shipping threshold or a discount's unit count, which no single-line
  move can.
"""

from __future__ import annotations

import numba
import numpy as np

from gpu_engine.solvers.ga import ops as ga_ops
from gpu_engine.solvers.ga.core import (
    D_CROSS,
    D_KIND,
    D_LINE,
    D_MASK,
    D_MUT,
    D_PICK,
    D_TOUR_A,
    D_TOUR_B,
    MUT_ELITE_GROUP,
    MUT_EMPTY_MERCHANT,
    MUT_GROW_MERCHANT,
    MUT_MOVE_TO_USED,
    MUT_RANDOM_LINE,
    N_DRAWS,
    N_MUTATIONS,
    NO_CANDIDATE,
    NO_MOVE,
)
from gpu_engine.solvers.ga.rng import rand_below, rand_chance, rng_next

merchant_costs = numba.njit(cache=True)(ga_ops.merchant_costs)
removals = numba.njit(cache=True)(ga_ops.removals)
scan_pairs = numba.njit(cache=True)(ga_ops.scan_pairs)
close_lines = numba.njit(cache=True)(ga_ops.close_lines)
grow_keys = numba.njit(cache=True)(ga_ops.grow_keys)
grow_scan = numba.njit(cache=True)(ga_ops.grow_scan)
grow_apply = numba.njit(cache=True)(ga_ops.grow_apply)
crossover_lines = numba.njit(cache=True)(ga_ops.crossover_lines)
copy_group = numba.njit(cache=True)(ga_ops.copy_group)
argmin_range = numba.njit(cache=True)(ga_ops.argmin_range)
move_line = numba.njit(cache=True)(ga_ops.move_line)
used_target = numba.njit(cache=True)(ga_ops.used_target)
tournament = numba.njit(cache=True)(ga_ops.tournament)


@numba.njit(cache=True)
def aggregate(child, qty, price, params, sub, units, mcost):
    """Per-merchant state of ``child`` from scratch; returns the total."""
    sub[:] = 0
    units[:] = 0
    for i in range(child.size):
        m = child[i]
        sub[m] += qty[i] * price[i, m]
        units[m] += qty[i]
    return merchant_costs(0, 1, sub, units, params, mcost)


@numba.njit(cache=True)
def descend(steps, total, child, qty, price, cand, cnt, params, sub, units, mcost, removal):
    """Up to ``steps`` best single-line moves, each strictly improving; returns the total."""
    width = cand.shape[1]
    for _ in range(steps):
        removals(0, 1, child, qty, price, params, sub, units, mcost, removal)
        delta, pair = scan_pairs(
            0, 1, child, removal, qty, price, cand, cnt, params, sub, units, mcost
        )
        if pair == NO_MOVE:
            break
        i = pair // width
        move_line(i, cand[i, pair - i * width], child, qty, price, params, sub, units, mcost)
        total += delta
    return total


@numba.njit(cache=True)
def close_merchant(u, child, qty, price, cand, cnt, params, sub, units, mcost):
    """Empty merchant ``u`` (lines with no other candidate stay); returns the new total."""
    close_lines(0, 1, u, child, qty, price, cand, cnt, params, sub, units, mcost)
    return aggregate(child, qty, price, params, sub, units, mcost)


@numba.njit(cache=True)
def grow_merchant(m, child, qty, price, params, sub, units, mcost, removal, keys, order):
    """Move the best-scoring prefix (at least one line) of ``m``'s growth order to ``m``;
    returns the new total (unchanged when ``m`` can take no line)."""
    removals(0, 1, child, qty, price, params, sub, units, mcost, removal)
    count = grow_keys(0, 1, m, child, removal, qty, price, keys)
    if count > 0:
        # A stable sort gives the (key, line) order the kernels' rank count does (O(n log n)
        # here against their O(n^2) over a block's threads, too slow on one core).
        order[:count] = np.argsort(keys, kind="mergesort")[:count]
        _, length = grow_scan(m, count, order, child, qty, price, params, sub, units, mcost)
        grow_apply(0, 1, m, length, order, child)
    return aggregate(child, qty, price, params, sub, units, mcost)


@numba.njit(cache=True)
def mutate(
    draws,
    total,
    child,
    elite,
    qty,
    price,
    cand,
    cnt,
    params,
    sub,
    units,
    mcost,
    removal,
    keys,
    order,
):
    """Apply the mutation the draws select; returns the new total."""
    kind = rand_below(draws[D_KIND], N_MUTATIONS)
    i = rand_below(draws[D_LINE], child.size)
    if kind == MUT_MOVE_TO_USED:
        b = used_target(i, draws[D_PICK], child, cand, cnt, units)
        if b >= 0:
            total += move_line(i, b, child, qty, price, params, sub, units, mcost)
    elif kind == MUT_EMPTY_MERCHANT:
        total = close_merchant(child[i], child, qty, price, cand, cnt, params, sub, units, mcost)
    elif kind == MUT_ELITE_GROUP:
        copy_group(0, 1, elite, elite[i], child)
        total = aggregate(child, qty, price, params, sub, units, mcost)
    elif kind == MUT_GROW_MERCHANT:
        m = cand[i, rand_below(draws[D_PICK], cnt[i])]
        total = grow_merchant(m, child, qty, price, params, sub, units, mcost, removal, keys, order)
    elif kind == MUT_RANDOM_LINE:
        b = cand[i, rand_below(draws[D_PICK], cnt[i])]
        if b != child[i]:
            total += move_line(i, b, child, qty, price, params, sub, units, mcost)
    return total


@numba.njit(cache=True)
def make_child(
    slot,
    genes_in,
    fit_in,
    elite,
    states,
    knobs,
    qty,
    price,
    cand,
    cnt,
    params,
    child,
    sub,
    units,
    mcost,
    removal,
    keys,
    order,
    draws,
):
    """Build the child of ``slot`` into ``child``; returns its total. ``knobs``: tournament
    size, crossover and mutation probabilities (out of rng.PROB_ONE), descent steps."""
    tour, p_cross, p_mut, ls_steps = knobs
    for k in range(N_DRAWS):
        draws[k] = rng_next(states, slot)
    a = tournament(draws, D_TOUR_A, tour, fit_in)
    b = tournament(draws, D_TOUR_B, tour, fit_in)
    cross = rand_chance(draws[D_CROSS], p_cross)
    crossover_lines(0, 1, genes_in, a, b, cross, draws[D_MASK], child)
    total = aggregate(child, qty, price, params, sub, units, mcost)
    if rand_chance(draws[D_MUT], p_mut):
        total = mutate(
            draws,
            total,
            child,
            elite,
            qty,
            price,
            cand,
            cnt,
            params,
            sub,
            units,
            mcost,
            removal,
            keys,
            order,
        )
    return descend(
        ls_steps, total, child, qty, price, cand, cnt, params, sub, units, mcost, removal
    )


@numba.njit(cache=True, nogil=True)
def generation_slots(
    lo,
    hi,
    genes_in,
    fit_in,
    genes_out,
    fit_out,
    elite_slot,
    states,
    knobs,
    qty,
    price,
    cand,
    cnt,
    params,
):
    """Slots ``[lo, hi)`` of one generation: each slot's child replaces the slot's individual
    unless it is worse. Reads only ``genes_in``/``fit_in``, writes only its slots' rows (and
    random states): any split of the slots over threads gives the same generation."""
    n = qty.size
    n_merchants = price.shape[1]
    child = np.empty(n, dtype=np.int32)
    sub = np.empty(n_merchants, dtype=np.int64)
    units = np.empty(n_merchants, dtype=np.int64)
    mcost = np.empty(n_merchants, dtype=np.int64)
    removal = np.empty(n, dtype=np.int64)
    keys = np.empty(n, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    draws = np.empty(N_DRAWS, dtype=np.uint64)
    elite = genes_in[elite_slot]
    for slot in range(lo, hi):
        total = make_child(
            slot,
            genes_in,
            fit_in,
            elite,
            states,
            knobs,
            qty,
            price,
            cand,
            cnt,
            params,
            child,
            sub,
            units,
            mcost,
            removal,
            keys,
            order,
            draws,
        )
        if total <= fit_in[slot]:
            genes_out[slot] = child
            fit_out[slot] = total
        else:
            genes_out[slot] = genes_in[slot]
            fit_out[slot] = fit_in[slot]


@numba.njit(cache=True, nogil=True)
def initialise_slots(lo, hi, genes, fit, seeded, states, ls_steps, qty, price, cand, cnt, params):
    """Slots ``[lo, hi)`` of the first population: rows below ``seeded.shape[0]`` copy the
    seeded individuals; the others take a random eligible merchant per line (one draw per line
    from the row's state). Every row then gets ``ls_steps`` descent steps and its fitness."""
    n = qty.size
    n_merchants = price.shape[1]
    sub = np.empty(n_merchants, dtype=np.int64)
    units = np.empty(n_merchants, dtype=np.int64)
    mcost = np.empty(n_merchants, dtype=np.int64)
    removal = np.empty(n, dtype=np.int64)
    for slot in range(lo, hi):
        child = genes[slot]
        if slot < seeded.shape[0]:
            child[:] = seeded[slot]
        else:
            for i in range(n):
                child[i] = cand[i, rand_below(rng_next(states, slot), cnt[i])]
        total = aggregate(child, qty, price, params, sub, units, mcost)
        fit[slot] = descend(
            ls_steps, total, child, qty, price, cand, cnt, params, sub, units, mcost, removal
        )


@numba.njit(cache=True)
def best_slot(fit):
    """Slot of the lowest fitness (ties: the lowest slot)."""
    return argmin_range(0, 1, fit)[1]


@numba.njit(cache=True)
def elite_candidate(
    j, trial, steps, qty, price, cand, cnt, params, sub, units, mcost, removal, keys, order
):
    """Apply elite move ``j`` to ``trial`` (a copy of the elite), then ``steps`` descent steps;
    returns the total, or NO_CANDIDATE. Moves: 0 descent only; 1 + m grow m; 1 + mc + m close m
    (only for a merchant in use)."""
    n_merchants = price.shape[1]
    total = aggregate(trial, qty, price, params, sub, units, mcost)
    if 1 <= j <= n_merchants:
        total = grow_merchant(
            j - 1, trial, qty, price, params, sub, units, mcost, removal, keys, order
        )
    elif j > n_merchants:
        u = j - 1 - n_merchants
        if units[u] == 0:
            return NO_CANDIDATE
        total = close_merchant(u, trial, qty, price, cand, cnt, params, sub, units, mcost)
    return descend(steps, total, trial, qty, price, cand, cnt, params, sub, units, mcost, removal)


def elite_moves_count(n_merchants):
    """Elite moves: descent only, grow each merchant, close each merchant."""
    return 1 + 2 * n_merchants


@numba.njit(cache=True, nogil=True)
def elite_moves(lo, hi, row, row_total, steps, keep, qty, price, cand, cnt, params):
    """Elite moves ``[lo, hi)`` tried on copies of ``row`` (whose total is ``row_total``):
    returns (total, move) of the best that is strictly better than ``row_total`` (lowest total,
    then lowest move), its result written to ``keep``; (NO_CANDIDATE, -1) when none is. The
    best over a split of the moves is the best of the parts' bests by (total, move)."""
    n = qty.size
    n_merchants = price.shape[1]
    trial = np.empty(n, dtype=np.int32)
    sub = np.empty(n_merchants, dtype=np.int64)
    units = np.empty(n_merchants, dtype=np.int64)
    mcost = np.empty(n_merchants, dtype=np.int64)
    removal = np.empty(n, dtype=np.int64)
    keys = np.empty(n, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    best_total = row_total
    best_j = -1
    for j in range(lo, hi):
        trial[:] = row
        total = elite_candidate(
            j, trial, steps, qty, price, cand, cnt, params, sub, units, mcost, removal, keys, order
        )
        if total < best_total:
            best_total = total
            best_j = j
            keep[:] = trial
    if best_j < 0:
        return NO_CANDIDATE, -1
    return best_total, best_j
