"""Exact full search on the CPU (numba): every assignment is priced.

The twin of the GPU kernel (:mod:`gpu_engine.solvers.full.cuda`), walking the same rows with the
same operations (:mod:`gpu_engine.solvers.full.ops`, compiled here by ``numba.njit``; the
odometer step is ``ops.next_row`` written out in the loop, see there) in single mode: a row is
one choice of every free line but the last, whose choices are priced in O(1) each; moving to
the next row is an odometer step. One thread walks a range of assignment
indexes (a partial first or last row included), so a search can be time-boxed in slices.
A version 2 cart (the layout has ``parcels``) walks the same rows through
:mod:`gpu_engine.solvers.full.parcel_ops`, the kernel's own functions.
"""

from __future__ import annotations

import time

import numba
import numpy as np

from gpu_engine.budget import check_budget, refuse_if_far_over
from gpu_engine.layout import FullSearchLayout, full_search_layout
from gpu_engine.planning import rates
from gpu_engine.pricing import merchant_cost
from gpu_engine.problem import CartProblem
from gpu_engine.results import make_solution
from gpu_engine.solution import Solution
from gpu_engine.solvers.full import ops, parcel_ops

NO_BEST = np.iinfo(np.int64).max
MIN_SLICE = 1 << 16
# Searches smaller than this are too short (or include compilation) to time a rate from.
RATE_MIN_COMPLEXITY = 10_000_000
# A version 2 cart's walk (parcels and merchants re-priced) runs about this many times slower
# than the recorded version 1 rate (35-40 against 90-140 M assignments/s on one core).
PARCEL_SLOWDOWN = 4

_decode_row = numba.njit(cache=True)(ops.decode_row)
_row_state = numba.njit(cache=True)(ops.row_state)
_row_single = numba.njit(cache=True)(ops.row_single)


@numba.njit(cache=True)
def search_range(start, stop, radix, off, cand, amount, qty, params, sub0, units0):
    """Cheapest (total, index) over assignment indexes [start, stop); ties keep the lowest index.

    With no free line there is one assignment, index 0."""
    base, extra, free_over, dmin, dbp = params
    n_lines = radix.shape[0]
    n_m = sub0.shape[0]
    sub = np.empty(n_m, dtype=np.int64)
    units = np.empty(n_m, dtype=np.int64)
    cost = np.empty(n_m, dtype=np.int64)
    digits = np.zeros(max(n_lines, 1), dtype=np.int64)
    if n_lines == 0:
        total = _row_state(
            0, digits, off, cand, amount, qty, n_m, sub0, units0, sub, units, cost,
            base, extra, free_over, dmin, dbp,
        )  # fmt: skip
        return total, 0
    best_t = NO_BEST
    best_i = -1
    if start >= stop:
        return best_t, best_i
    lb = n_lines - 1
    r_b = radix[lb]
    row = start // r_b
    _decode_row(row, lb, radix, digits)
    total = _row_state(
        lb, digits, off, cand, amount, qty, n_m, sub0, units0, sub, units, cost,
        base, extra, free_over, dmin, dbp,
    )  # fmt: skip
    j_lo = start - row * r_b
    while True:
        j_hi = min(r_b, stop - row * r_b)
        best_t, best_i = _row_single(
            row, total, lb, j_lo, j_hi, r_b, off, cand, amount, qty, sub, units, cost,
            base, extra, free_over, dmin, dbp, best_t, best_i,
        )  # fmt: skip
        row += 1
        if row * r_b >= stop:
            break
        j_lo = 0
        # ops.next_row's odometer, written out here: compiled by njit as a called function
        # (even inline="always") it costs tens of times more a row than written in the loop,
        # several times the whole search on short rows.
        k = lb - 1
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
            c = merchant_cost(sub[m], units[m], base[m], extra[m], free_over[m], dmin[m], dbp[m])
            total += c - cost[m]
            cost[m] = c
            e = off[k] + new
            m = cand[e]
            sub[m] += amount[e]
            units[m] += qty[k]
            c = merchant_cost(sub[m], units[m], base[m], extra[m], free_over[m], dmin[m], dbp[m])
            total += c - cost[m]
            cost[m] = c
            if new != 0:
                break
            k -= 1
    return best_t, best_i


@numba.njit(cache=True)
def search_range_parcels(
    start, stop, radix, off, cand, amount, qty, lgrams, owner, n_owners, sub0, units0, grams0,
    rates, tiers, terms,
):  # fmt: skip
    """:func:`search_range` priced by version 2's rules (parcels per column, merchant terms
    per owner): ``rates`` (base, extra) per column, ``tiers`` (tier_up, tier_fee, tier_count,
    per_kg) per column, ``terms`` (free, dmin, dbp) per owner."""
    base, extra = rates
    tier_up, tier_fee, tier_count, per_kg = tiers
    free, dmin, dbp = terms
    n_lines = radix.shape[0]
    n_c = sub0.shape[0]
    units = np.empty(n_c, dtype=np.int64)
    grams = np.empty(n_c, dtype=np.int64)
    fee = np.empty(n_c, dtype=np.int64)
    osub = np.empty(n_owners, dtype=np.int64)
    ounits = np.empty(n_owners, dtype=np.int64)
    oparcels = np.empty(n_owners, dtype=np.int64)
    ocost = np.empty(n_owners, dtype=np.int64)
    digits = np.zeros(max(n_lines, 1), dtype=np.int64)
    prefix = max(n_lines - 1, 0)
    if n_lines > 0:
        _decode_row(start // radix[prefix], prefix, radix, digits)
    total = parcel_ops.row_state(
        prefix, digits, off, cand, amount, qty, lgrams, n_c, n_owners, owner, sub0, units0,
        grams0, units, grams, fee, osub, ounits, oparcels, ocost,
        base, extra, tier_up, tier_fee, tier_count, per_kg, free, dmin, dbp,
    )  # fmt: skip
    if n_lines == 0:
        return total, 0
    best_t = NO_BEST
    best_i = -1
    if start >= stop:
        return best_t, best_i
    r_b = radix[prefix]
    row = start // r_b
    j_lo = start - row * r_b
    while True:
        j_hi = min(r_b, stop - row * r_b)
        best_t, best_i = parcel_ops.row_single(
            row, total, prefix, j_lo, j_hi, r_b, off, cand, amount, qty, lgrams, owner,
            units, grams, fee, osub, ounits, oparcels, ocost,
            base, extra, tier_up, tier_fee, tier_count, per_kg, free, dmin, dbp, best_t, best_i,
        )  # fmt: skip
        row += 1
        if row * r_b >= stop:
            break
        j_lo = 0
        # parcel_ops.next_row's odometer written out, as in search_range: called, it costs
        # the search five times its time on rows of a few assignments.
        k = prefix - 1
        while k >= 0:
            old = digits[k]
            new = old + 1
            if new == radix[k]:
                new = 0
            digits[k] = new
            total += parcel_ops.shift_line(
                -1, off[k] + old, qty[k], lgrams[k], cand, amount, owner, units, grams, fee,
                osub, ounits, oparcels, ocost,
                base, extra, tier_up, tier_fee, tier_count, per_kg, free, dmin, dbp,
            )  # fmt: skip
            total += parcel_ops.shift_line(
                1, off[k] + new, qty[k], lgrams[k], cand, amount, owner, units, grams, fee,
                osub, ounits, oparcels, ocost,
                base, extra, tier_up, tier_fee, tier_count, per_kg, free, dmin, dbp,
            )  # fmt: skip
            if new != 0:
                break
            k -= 1
    return best_t, best_i


def search_layout(
    layout: FullSearchLayout,
    *,
    start: int = 0,
    stop: int | None = None,
    flat: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> tuple[int, int]:
    """CPU full search over ``[start, stop)`` of ``layout``'s numbering (``flat``: the
    layout's :meth:`~gpu_engine.layout.FullSearchLayout.flat`, when the caller has it)."""
    stop = layout.complexity if stop is None else stop
    off, cand, amount = layout.flat() if flat is None else flat
    if layout.parcels is not None:
        p = layout.parcels
        best, index = search_range_parcels(
            np.int64(start), np.int64(stop), layout.radix, off, cand, amount, layout.qty,
            p.grams, p.owner, p.n_owners, layout.sub0, layout.units0, p.grams0,
            layout.params[:2], p.tiers, p.terms,
        )  # fmt: skip
        return int(best), int(index)
    best, index = search_range(
        np.int64(start),
        np.int64(stop),
        layout.radix,
        off,
        cand,
        amount,
        layout.qty,
        layout.params,
        layout.sub0,
        layout.units0,
    )
    return int(best), int(index)


def solve_cpu_full(problem: CartProblem, *, budget_ms: float | None = None) -> Solution:
    """Exact CPU full search; with ``budget_ms`` it stops between slices when the budget is
    spent and returns the best assignment seen, flagged not optimal, and refuses up front
    (BudgetError) when the predicted time at the known rate is far over the budget."""
    budget_ms = check_budget(budget_ms)
    t0 = time.perf_counter()
    layout = full_search_layout(problem)
    rate = rates.cpu_full_rate() / (1 if layout.parcels is None else PARCEL_SLOWDOWN)
    refuse_if_far_over("cpu-full", layout.complexity / rate * 1e3, budget_ms)
    best, best_index, done = NO_BEST, -1, 0
    # Slices of about 50 ms at the known rate: short enough to honour a budget closely.
    slice_size = max(MIN_SLICE, int(rate * 0.05))
    flat = layout.flat()
    t_search = time.perf_counter()
    while done < layout.complexity:
        stop = min(layout.complexity, done + slice_size)
        total, index = search_layout(layout, start=done, stop=stop, flat=flat)
        if total < best:
            best, best_index = total, index
        done = stop
        if budget_ms is not None and (time.perf_counter() - t0) * 1e3 >= budget_ms:
            break
    elapsed = time.perf_counter() - t0
    search_s = time.perf_counter() - t_search
    # The rate is version 1's walk; a version 2 walk (parcels) is slower and would skew it.
    if layout.parcels is None and done == layout.complexity and done >= RATE_MIN_COMPLEXITY:
        rates.record_cpu_full_rate(done / search_s)
    return make_solution(
        problem,
        layout.decode(best_index),
        total=best,
        optimal=done == layout.complexity,
        algorithm="cpu-full",
        device="cpu",
        elapsed_ms=elapsed * 1e3,
        stats={"searched": done, "slices": -(-done // slice_size)},
    )
