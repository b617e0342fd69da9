"""Exact full search on the CPU (numba): every assignment is priced.

The search walks the mixed-radix numbering of :mod:`gpu_engine.layout` like an odometer. The
per-merchant state (subtotal, units, cost) excludes the innermost line, so each innermost choice
is priced in O(1): ``total - cost[m] + merchant_cost(state[m] + line)``. Outer digits change one
line at a time, which moves two merchants' state. The range can be split (``start``/``stop``) so
that a search is time-boxed in slices; the GPU kernel is this loop's twin.
"""

from __future__ import annotations

import time

import numba
import numpy as np

from gpu_engine.layout import FullSearchLayout, full_search_layout
from gpu_engine.planning import rates
from gpu_engine.pricing import merchant_cost
from gpu_engine.problem import CartProblem
from gpu_engine.results import make_solution
from gpu_engine.solution import Solution

NO_BEST = np.iinfo(np.int64).max
MIN_SLICE = 1 << 16
# Searches smaller than this are too short (or include compilation) to time a rate from.
RATE_MIN_COMPLEXITY = 10_000_000


@numba.njit(cache=True)
def _shift_line(line, old, new, cand, amount, qty, params, sub, units, cost):
    """Move free line ``line`` from digit ``old`` to ``new``; returns the change of the total."""
    base, extra, free_over, dmin, dbp = params
    delta = 0
    m = cand[line, old]
    sub[m] -= amount[line, old]
    units[m] -= qty[line]
    c = merchant_cost(sub[m], units[m], base[m], extra[m], free_over[m], dmin[m], dbp[m])
    delta += c - cost[m]
    cost[m] = c
    m = cand[line, new]
    sub[m] += amount[line, new]
    units[m] += qty[line]
    c = merchant_cost(sub[m], units[m], base[m], extra[m], free_over[m], dmin[m], dbp[m])
    delta += c - cost[m]
    cost[m] = c
    return delta


@numba.njit(cache=True)
def search_range(start, stop, radix, cand, amount, qty, params, sub0, units0):
    """Cheapest (total, index) over assignment indexes [start, stop); ties keep the lowest index.

    With no free line there is one assignment, index 0."""
    base, extra, free_over, dmin, dbp = params
    n_lines = radix.shape[0]
    sub = sub0.copy()
    units = units0.copy()
    cost = np.zeros(sub.shape[0], dtype=np.int64)
    digits = np.zeros(max(n_lines, 1), dtype=np.int64)
    rest = start
    for line in range(n_lines - 1, -1, -1):
        digits[line] = rest % radix[line]
        rest //= radix[line]
    for line in range(n_lines - 1):
        m = cand[line, digits[line]]
        sub[m] += amount[line, digits[line]]
        units[m] += qty[line]
    total = 0
    for m in range(sub.shape[0]):
        cost[m] = merchant_cost(sub[m], units[m], base[m], extra[m], free_over[m], dmin[m], dbp[m])
        total += cost[m]
    if n_lines == 0:
        return total, 0
    inner = n_lines - 1
    q = qty[inner]
    best = NO_BEST
    best_index = -1
    index = start
    j = digits[inner]
    while index < stop:
        j_end = min(radix[inner], j + (stop - index))
        for jj in range(j, j_end):
            m = cand[inner, jj]
            t = total - cost[m]
            t += merchant_cost(
                sub[m] + amount[inner, jj],
                units[m] + q,
                base[m],
                extra[m],
                free_over[m],
                dmin[m],
                dbp[m],
            )
            if t < best:
                best = t
                best_index = index + (jj - j)
        index += j_end - j
        j = 0
        line = inner - 1
        while index < stop and line >= 0:
            old = digits[line]
            new = old + 1 if old + 1 < radix[line] else 0
            digits[line] = new
            total += _shift_line(line, old, new, cand, amount, qty, params, sub, units, cost)
            if new != 0:
                break
            line -= 1
    return best, best_index


def search_layout(
    layout: FullSearchLayout, *, start: int = 0, stop: int | None = None
) -> tuple[int, int]:
    """CPU full search over ``[start, stop)`` of ``layout``'s numbering."""
    stop = layout.complexity if stop is None else stop
    best, index = search_range(
        np.int64(start),
        np.int64(stop),
        layout.radix,
        layout.cand,
        layout.amount,
        layout.qty,
        layout.params,
        layout.sub0,
        layout.units0,
    )
    return int(best), int(index)


def solve_cpu_full(problem: CartProblem, *, budget_ms: float | None = None) -> Solution:
    """Exact CPU full search; with ``budget_ms`` it stops between slices when the budget is
    spent and returns the best assignment seen, flagged not optimal."""
    t0 = time.perf_counter()
    layout = full_search_layout(problem)
    best, best_index, done = NO_BEST, -1, 0
    # Slices of about 50 ms at the known rate: short enough to honour a budget closely.
    slice_size = max(MIN_SLICE, int(rates.cpu_full_rate() * 0.05))
    t_search = time.perf_counter()
    while done < layout.complexity:
        stop = min(layout.complexity, done + slice_size)
        total, index = search_layout(layout, start=done, stop=stop)
        if total < best:
            best, best_index = total, index
        done = stop
        if budget_ms is not None and (time.perf_counter() - t0) * 1e3 >= budget_ms:
            break
    elapsed = time.perf_counter() - t0
    search_s = time.perf_counter() - t_search
    if done == layout.complexity and done >= RATE_MIN_COMPLEXITY:
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
