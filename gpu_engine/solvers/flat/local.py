"""The primal side: a set of open merchants, each line at its cheapest open one, improved by
exact local search (close one, open one, or swap one for another) until no move lowers the
total. The UFL's total is ``sum of open fees + sum of each line's cheapest open cost``, so a
move's change is computed from each line's cheapest and second cheapest open cost alone."""

from __future__ import annotations

import numba
import numpy as np

from gpu_engine.solvers.flat.data import INF


@numba.njit(cache=True)
def assign(is_open, cand, cand_cost, cand_count, best, best_m, second):
    """Each line's cheapest open merchant (``best_m``, -1 if none), its cost and the second
    cheapest open cost (INF if none)."""
    for i in range(best.shape[0]):
        best[i] = INF
        best_m[i] = -1
        second[i] = INF
        for t in range(cand_count[i]):
            m = cand[i, t]
            if not is_open[m]:
                continue
            if best_m[i] < 0:
                best[i] = cand_cost[i, t]
                best_m[i] = m
            else:
                second[i] = cand_cost[i, t]
                break


@numba.njit(cache=True)
def open_total(is_open, fee, best):
    """The UFL total of an open set (INF when a line has no open merchant)."""
    total = 0
    for i in range(best.shape[0]):
        if best[i] >= INF:
            return INF
        total += best[i]
    for m in range(fee.shape[0]):
        if is_open[m]:
            total += fee[m]
    return total


@numba.njit(cache=True)
def _best_move(is_open, allowed, fee, cost, best, best_m, second, gain, lines_of):
    """The move that lowers the total most: (delta, close, open); -1 for no merchant. Swap
    (a out, b in): ``fee_b - fee_a - gain_b + sum over a's lines of the cost of leaving a``,
    where ``gain_b`` is what b saves every line."""
    n, n_m = cost.shape
    for b in range(n_m):
        gain[b] = 0
        if is_open[b] or not allowed[b]:
            continue
        for i in range(n):
            if cost[i, b] < best[i]:
                gain[b] += best[i] - cost[i, b]
    best_delta = 0
    best_close = -1
    best_open = -1
    for b in range(n_m):
        if not is_open[b] and allowed[b] and fee[b] - gain[b] < best_delta:
            best_delta, best_close, best_open = fee[b] - gain[b], -1, b
    for a in range(n_m):
        if not is_open[a]:
            continue
        k = 0
        for i in range(n):
            if best_m[i] == a:
                lines_of[k] = i
                k += 1
        drop = -fee[a]
        for t in range(k):
            i = lines_of[t]
            if second[i] >= INF:
                drop = INF
                break
            drop += second[i] - best[i]
        if drop < best_delta:
            best_delta, best_close, best_open = drop, a, -1
        for b in range(n_m):
            if is_open[b] or not allowed[b]:
                continue
            delta = fee[b] - fee[a] - gain[b]
            for t in range(k):
                i = lines_of[t]
                c = cost[i, b]
                moved = second[i] if second[i] < c else c
                if moved >= INF:
                    delta = INF
                    break
                # Leaving a costs moved - best; gain_b already counted max(0, best - c).
                delta += moved - best[i]
                if c < best[i]:
                    delta += best[i] - c
            if delta < best_delta:
                best_delta, best_close, best_open = delta, a, b
    return best_delta, best_close, best_open


@numba.njit(cache=True)
def improve(is_open, allowed, fee, cost, cand, cand_cost, cand_count, best, best_m, second):
    """Local search from ``is_open`` (changed in place) over merchants in ``allowed``: the best
    close, open or swap move while one lowers the total. Returns the total (INF: no line
    assignment exists from this open set and no move repairs it)."""
    n, n_m = cost.shape
    gain = np.zeros(n_m, dtype=np.int64)
    lines_of = np.empty(n, dtype=np.int64)
    assign(is_open, cand, cand_cost, cand_count, best, best_m, second)
    total = open_total(is_open, fee, best)
    if total >= INF:
        return INF
    while True:
        delta, close, add = _best_move(
            is_open, allowed, fee, cost, best, best_m, second, gain, lines_of
        )
        if delta >= 0:
            return total
        if close >= 0:
            is_open[close] = False
        if add >= 0:
            is_open[add] = True
        assign(is_open, cand, cand_cost, cand_count, best, best_m, second)
        total = open_total(is_open, fee, best)
