"""The genetic algorithm on the CPU for version 2 carts: :mod:`.cpu`'s steps with the gene a
column (a merchant's node) and the state of :mod:`.ops_v2` (per column and per owner).

The same draws, the same mutation kinds, the same moves and the same tie-breaks as :mod:`.cpu`;
only the pricing differs, so a simple cart never comes here (:mod:`.solve` keeps it on
:mod:`.cpu`). The twin of :mod:`.cuda_v2`: both end with the same population for the same seed.

``p`` is :meth:`GaArrays.v2_problem` (a tuple of arrays, unpacked where an op needs them);
a child's state is ``cst``/``ost`` (:mod:`.ops_v2`) and its total the sum of ``ost[S_COST]``.
Moves of a column: *close* (each line to the column that costs least to add it to) and *grow*
(the best prefix of the lines it could take); a mutation or a descent step may move a line to
another node of its merchant as well as to another merchant.
"""

from __future__ import annotations

import numba
import numpy as np

from gpu_engine.solvers.ga import ops_v2
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
    GaArrays,
)
from gpu_engine.solvers.ga.cpu import (
    copy_group,
    crossover_lines,
    grow_apply,
    grow_keys,
    tournament,
    used_target,
)
from gpu_engine.solvers.ga.ops_v2 import C_OWNER, N_STATE, S_FEE, S_PARCELS, S_SUB, S_UNITS
from gpu_engine.solvers.ga.rng import rand_below, rand_chance, rng_next

_ops = ops_v2.twins(ops_v2.FUNCTIONS, numba.njit(cache=True))
column_sums = _ops["column_sums"]
column_fees = _ops["column_fees"]
owner_costs = _ops["owner_costs"]
removals = _ops["removals"]
scan_pairs = _ops["scan_pairs"]
close_lines = _ops["close_lines"]
grow_scan = _ops["grow_scan"]
move_line = _ops["move_line"]

# Descent steps of :func:`polish` (each the best single-line move).
POLISH_STEPS = 1000


@numba.njit(cache=True)
def aggregate(child, p, cst, ost):
    """The state of ``child`` from scratch; returns its total."""
    qty, wgt, price, _cand, _cnt, colp, tier_up, tier_fee, ownp = p
    cst[:] = 0
    ost[:] = 0
    column_sums(0, 1, child, qty, wgt, price, cst)
    column_fees(0, 1, colp, tier_up, tier_fee, cst)
    for c in range(colp.shape[1]):
        o = colp[C_OWNER, c]
        ost[S_SUB, o] += cst[S_SUB, c]
        ost[S_UNITS, o] += cst[S_UNITS, c]
        ost[S_PARCELS, o] += cst[S_FEE, c]
    return owner_costs(0, 1, ownp, ost)


@numba.njit(cache=True)
def descend(steps, total, child, p, cst, ost, removal):
    """Up to ``steps`` best single-line moves, each strictly improving; returns the total."""
    qty, wgt, price, cand, cnt, colp, tier_up, tier_fee, ownp = p
    width = cand.shape[1]
    for _ in range(steps):
        removals(0, 1, child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost, removal)
        delta, pair = scan_pairs(
            0,
            1,
            child,
            removal,
            qty,
            wgt,
            price,
            cand,
            cnt,
            colp,
            tier_up,
            tier_fee,
            ownp,
            cst,
            ost,
        )
        if pair == NO_MOVE:
            break
        i = pair // width
        b = cand[i, pair - i * width]
        move_line(i, b, child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost)
        total += delta
    return total


@numba.njit(cache=True)
def close_column(u, child, p, cst, ost):
    """Empty column ``u`` (lines with no other candidate stay); returns the new total."""
    qty, wgt, price, cand, cnt, colp, tier_up, tier_fee, ownp = p
    close_lines(0, 1, u, child, qty, wgt, price, cand, cnt, colp, tier_up, tier_fee, ownp, cst, ost)
    return aggregate(child, p, cst, ost)


@numba.njit(cache=True)
def grow_column(m, child, p, cst, ost, removal, keys, order):
    """Move the best-scoring prefix (at least one line) of ``m``'s growth order to column
    ``m``; returns the new total (unchanged when ``m`` can take no line)."""
    qty, wgt, price, _cand, _cnt, colp, tier_up, tier_fee, ownp = p
    removals(0, 1, child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost, removal)
    count = grow_keys(0, 1, m, child, removal, qty, price, keys)
    if count > 0:
        order[:count] = np.argsort(keys, kind="mergesort")[:count]
        _, length = grow_scan(
            m, count, order, child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost
        )
        grow_apply(0, 1, m, length, order, child)
    return aggregate(child, p, cst, ost)


@numba.njit(cache=True)
def mutate(draws, total, child, elite, p, cst, ost, removal, keys, order):
    """Apply the mutation the draws select (:func:`.cpu.mutate`); returns the new total."""
    qty, wgt, price, cand, cnt, colp, tier_up, tier_fee, ownp = p
    kind = rand_below(draws[D_KIND], N_MUTATIONS)
    i = rand_below(draws[D_LINE], child.size)
    if kind == MUT_MOVE_TO_USED:
        b = used_target(i, draws[D_PICK], child, cand, cnt, cst[S_UNITS])
        if b >= 0:
            total += move_line(
                i, b, child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost
            )
    elif kind == MUT_EMPTY_MERCHANT:
        total = close_column(child[i], child, p, cst, ost)
    elif kind == MUT_ELITE_GROUP:
        copy_group(0, 1, elite, elite[i], child)
        total = aggregate(child, p, cst, ost)
    elif kind == MUT_GROW_MERCHANT:
        m = cand[i, rand_below(draws[D_PICK], cnt[i])]
        total = grow_column(m, child, p, cst, ost, removal, keys, order)
    elif kind == MUT_RANDOM_LINE:
        b = cand[i, rand_below(draws[D_PICK], cnt[i])]
        if b != child[i]:
            total += move_line(
                i, b, child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost
            )
    return total


@numba.njit(cache=True)
def make_child(
    slot, genes_in, fit_in, elite, states, knobs, p, child, cst, ost, removal, keys, order, draws
):
    """Build the child of ``slot`` into ``child`` (:func:`.cpu.make_child`); returns its
    total."""
    tour, p_cross, p_mut, ls_steps = knobs
    for k in range(N_DRAWS):
        draws[k] = rng_next(states, slot)
    a = tournament(draws, D_TOUR_A, tour, fit_in)
    b = tournament(draws, D_TOUR_B, tour, fit_in)
    cross = rand_chance(draws[D_CROSS], p_cross)
    crossover_lines(0, 1, genes_in, a, b, cross, draws[D_MASK], child)
    total = aggregate(child, p, cst, ost)
    if rand_chance(draws[D_MUT], p_mut):
        total = mutate(draws, total, child, elite, p, cst, ost, removal, keys, order)
    return descend(ls_steps, total, child, p, cst, ost, removal)


@numba.njit(cache=True)
def _buffers(p):
    qty = p[0]
    n = qty.size
    cst = np.empty((N_STATE, p[5].shape[1]), dtype=np.int64)
    ost = np.empty((N_STATE, p[8].shape[1]), dtype=np.int64)
    return cst, ost, np.empty(n, dtype=np.int64), np.empty(n, np.int64), np.empty(n, np.int64)


@numba.njit(cache=True, nogil=True)
def generation_slots(lo, hi, genes_in, fit_in, genes_out, fit_out, elite_slot, states, knobs, p):
    """Slots ``[lo, hi)`` of one generation (:func:`.cpu.generation_slots`)."""
    child = np.empty(p[0].size, dtype=np.int32)
    cst, ost, removal, keys, order = _buffers(p)
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
            p,
            child,
            cst,
            ost,
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
def initialise_slots(lo, hi, genes, fit, seeded, states, ls_steps, p):
    """Slots ``[lo, hi)`` of the first population (:func:`.cpu.initialise_slots`)."""
    cand, cnt = p[3], p[4]
    cst, ost, removal, _, _ = _buffers(p)
    for slot in range(lo, hi):
        child = genes[slot]
        if slot < seeded.shape[0]:
            child[:] = seeded[slot]
        else:
            for i in range(child.size):
                child[i] = cand[i, rand_below(rng_next(states, slot), cnt[i])]
        total = aggregate(child, p, cst, ost)
        fit[slot] = descend(ls_steps, total, child, p, cst, ost, removal)


@numba.njit(cache=True)
def elite_candidate(j, trial, steps, p, cst, ost, removal, keys, order):
    """Elite move ``j`` on ``trial`` then ``steps`` descent steps (:func:`.cpu.elite_candidate`:
    0 descent only; 1 + c grow column c; 1 + mc + c close column c, when in use)."""
    n_columns = p[5].shape[1]
    total = aggregate(trial, p, cst, ost)
    if 1 <= j <= n_columns:
        total = grow_column(j - 1, trial, p, cst, ost, removal, keys, order)
    elif j > n_columns:
        u = j - 1 - n_columns
        if cst[S_UNITS, u] == 0:
            return NO_CANDIDATE
        total = close_column(u, trial, p, cst, ost)
    return descend(steps, total, trial, p, cst, ost, removal)


@numba.njit(cache=True, nogil=True)
def elite_moves(lo, hi, row, row_total, steps, keep, p):
    """Elite moves ``[lo, hi)`` on copies of ``row`` (:func:`.cpu.elite_moves`)."""
    trial = np.empty(row.size, dtype=np.int32)
    cst, ost, removal, keys, order = _buffers(p)
    best_total = row_total
    best_j = -1
    for j in range(lo, hi):
        trial[:] = row
        total = elite_candidate(j, trial, steps, p, cst, ost, removal, keys, order)
        if total < best_total:
            best_total = total
            best_j = j
            keep[:] = trial
    if best_j < 0:
        return NO_CANDIDATE, -1
    return best_total, best_j


@numba.njit(cache=True)
def total_of(row, p):
    """The exact total of a chromosome."""
    cst, ost, _, _, _ = _buffers(p)
    return aggregate(row, p, cst, ost)


@numba.njit(cache=True)
def _polish(row, steps, p):
    cst, ost, removal, _, _ = _buffers(p)
    total = aggregate(row, p, cst, ost)
    return descend(steps, total, row, p, cst, ost, removal)


def polish(arrays: GaArrays, row: np.ndarray, steps: int = POLISH_STEPS) -> int:
    """Best single-line moves under the exact rules on ``row`` (compact columns, changed in
    place) until none lowers the total (at most ``steps``); returns the total."""
    return int(_polish(row, steps, arrays.v2_problem()))
