"""Erlenkotter's dual ascent and dual adjustment (DUALOC, 1978) in integer cents.

The condensed dual of the UFL's strong LP relaxation: any ``v`` (one value per line) whose
slacks ``s_m = fee_m - sum_i max(0, v_i - cost_im)`` are all >= 0 proves ``sum v`` a lower
bound on the cart's optimum. Ascent raises each line's ``v`` one breakpoint (its next dearer
merchant) at a time while every merchant it already reaches keeps slack; adjustment lowers a
line that two tight merchants cover strictly, which frees slack that lines blocked by only one
of them may take, and keeps the change only when the sum grew. Costs and fees are integers, so
every step is exact: no rounding can make the bound unsound.

Branch and bound calls the same routines on a node: ``allowed`` False removes a merchant (the
"closed" branch) and a zero in ``fee`` makes it free (the "open" branch, its fee counted by the
caller). ``reach[i]`` counts the line's candidates (allowed or not) whose cost is <= ``v[i]``;
``block[i]`` is a merchant it reaches with no slack left (-1: not known). While lines rise
slacks only fall, so a line whose ``block`` still has no slack cannot rise and is not visited:
an ascent after a lowering visits the few lines that the freed slack unblocks, not all.
"""

from __future__ import annotations

import numba
import numpy as np

from gpu_engine.solvers.flat.data import INF

# A cap on the dual adjustment's sweeps over the lines (each kept sweep raised the bound by at
# least a cent; the loop stops at the first sweep that raises nothing).
MAX_ADJUST_SWEEPS = 50


@numba.njit(cache=True)
def start(fee, allowed, cand, cand_cost, cand_count, v, slack, reach, block):
    """The ascent's start: each line at its cheapest allowed merchant, every slack its fee.
    False when some line has no allowed merchant (an infeasible node)."""
    slack[:] = fee
    block[:] = -1
    for i in range(v.shape[0]):
        t = 0
        while t < cand_count[i] and not allowed[cand[i, t]]:
            t += 1
        if t == cand_count[i]:
            return False
        v[i] = cand_cost[i, t]
        r = t
        while r < cand_count[i] and cand_cost[i, r] <= v[i]:
            r += 1
        reach[i] = r
    return True


@numba.njit(cache=True)
def rebase(fee, allowed, cand, cand_cost, cand_count, v, slack, reach, block):
    """Slacks and reaches of ``v`` recomputed from scratch: a parent's ``v`` made a child's
    start. False when a line has no allowed merchant."""
    slack[:] = fee
    block[:] = -1
    for i in range(v.shape[0]):
        r = 0
        seen = False
        for t in range(cand_count[i]):
            m = cand[i, t]
            c = cand_cost[i, t]
            if c <= v[i]:
                r = t + 1
            if allowed[m]:
                seen = True
                if v[i] > c:
                    slack[m] -= v[i] - c
        if not seen:
            return False
        reach[i] = r
    return True


@numba.njit(cache=True)
def _raise_line(i, allowed, cand, cand_cost, cand_count, v, slack, reach, block):
    """One ascent step of line ``i``: up to its next allowed breakpoint or until a merchant it
    reaches runs out of slack. Returns the raise (0: blocked, ``block[i]`` set)."""
    step = INF
    for t in range(reach[i]):
        m = cand[i, t]
        if allowed[m] and slack[m] < step:
            if slack[m] == 0:
                block[i] = m
                return 0
            step = slack[m]
    t = reach[i]
    while t < cand_count[i] and not allowed[cand[i, t]]:
        t += 1
    if t < cand_count[i] and cand_cost[i, t] - v[i] < step:
        step = cand_cost[i, t] - v[i]
    for t in range(reach[i]):
        m = cand[i, t]
        if allowed[m]:
            slack[m] -= step
    v[i] += step
    r = reach[i]
    while r < cand_count[i] and cand_cost[i, r] <= v[i]:
        r += 1
    reach[i] = r
    block[i] = -1
    return step


@numba.njit(cache=True)
def ascend(order, skip, allowed, cand, cand_cost, cand_count, v, slack, reach, block, active):
    """Passes over the lines of ``order`` (all but ``skip``; -1 skips none), one breakpoint per
    line and pass, until no line can rise; ``active`` is scratch of ``order``'s length. Returns
    the total raise. Each pass visits only the lines that rose in the one before (a blocked line
    stays blocked), the first only those whose ``block`` has slack again."""
    k = 0
    for t in range(order.shape[0]):
        i = order[t]
        if i != skip and (block[i] < 0 or slack[block[i]] > 0):
            active[k] = i
            k += 1
    gained = 0
    while k > 0:
        kept = 0
        for t in range(k):
            i = active[t]
            step = _raise_line(i, allowed, cand, cand_cost, cand_count, v, slack, reach, block)
            if step > 0:
                gained += step
                active[kept] = i
                kept += 1
        k = kept
    return gained


@numba.njit(cache=True)
def _overcovered_level(i, allowed, cand, cand_cost, v, slack, reach):
    """The level to lower line ``i`` to when two or more tight merchants cover it strictly
    (cost < v): its next lower breakpoint; -1 when at most one does."""
    tight = 0
    below = -1
    for t in range(reach[i]):
        m = cand[i, t]
        c = cand_cost[i, t]
        if allowed[m] and c < v[i]:
            below = c
            if slack[m] == 0:
                tight += 1
    return below if tight >= 2 else -1


@numba.njit(cache=True)
def _lower_line(i, level, allowed, cand, cand_cost, v, slack, reach, block):
    """Lower line ``i`` to ``level``, giving back the slack it took above it."""
    drop = v[i] - level
    for t in range(reach[i]):
        m = cand[i, t]
        if allowed[m] and cand_cost[i, t] < v[i]:
            slack[m] += min(drop, v[i] - cand_cost[i, t])
    v[i] = level
    r = reach[i]
    while r > 0 and cand_cost[i, r - 1] > level:
        r -= 1
    reach[i] = r
    block[i] = -1


@numba.njit(cache=True)
def adjust(order, allowed, cand, cand_cost, cand_count, v, slack, reach, block):
    """Erlenkotter's dual adjustment, sweep after sweep while one raises the bound: per
    overcovered line, lower it one breakpoint, let the others rise, then it, then all; a try
    that does not raise the sum is undone (and not tried again until another try succeeds:
    the state it failed in is unchanged). Returns the total raise."""
    n = v.shape[0]
    saved_v = np.empty_like(v)
    saved_slack = np.empty_like(slack)
    saved_reach = np.empty_like(reach)
    saved_block = np.empty_like(block)
    active = np.empty(n, dtype=np.int64)
    failed_at = np.full(n, -1, dtype=np.int64)
    successes = 0
    gained = 0
    for _ in range(MAX_ADJUST_SWEEPS):
        swept = 0
        for k in range(n):
            i = order[k]
            if failed_at[i] == successes:
                continue
            level = _overcovered_level(i, allowed, cand, cand_cost, v, slack, reach)
            if level < 0:
                failed_at[i] = successes
                continue
            saved_v[:] = v
            saved_slack[:] = slack
            saved_reach[:] = reach
            saved_block[:] = block
            delta = level - v[i]
            _lower_line(i, level, allowed, cand, cand_cost, v, slack, reach, block)
            state = (allowed, cand, cand_cost, cand_count, v, slack, reach, block, active)
            delta += ascend(order, i, *state)
            delta += ascend(order[k : k + 1], -1, *state)
            delta += ascend(order, -1, *state)
            if delta > 0:
                swept += delta
                successes += 1
            else:
                v[:] = saved_v
                slack[:] = saved_slack
                reach[:] = saved_reach
                block[:] = saved_block
                failed_at[i] = successes
        if swept == 0:
            break
        gained += swept
    return gained


@numba.njit(cache=True)
def feasible(fee, allowed, cand, cand_cost, cand_count, v):
    """Whether ``v`` is dual feasible, recomputed from scratch: every allowed merchant's
    ``sum_i max(0, v_i - cost_im)`` is at most its fee."""
    used = np.zeros(fee.shape[0], dtype=np.int64)
    for i in range(v.shape[0]):
        for t in range(cand_count[i]):
            m = cand[i, t]
            if allowed[m] and v[i] > cand_cost[i, t]:
                used[m] += v[i] - cand_cost[i, t]
    return not np.any(allowed & (used > fee))


@numba.njit(cache=True)
def dual_bound(
    fee, allowed, order, cand, cand_cost, cand_count, v, slack, reach, with_adjust, warm
):
    """``sum v`` after ascent (and adjustment), checked feasible; -1 when a line has no allowed
    merchant, -2 when the check fails (a bug: never a bound). ``warm``: start from the ``v``
    given, which must be feasible, instead of each line's cheapest merchant."""
    block = np.empty(v.shape[0], dtype=np.int64)
    if warm:
        if not rebase(fee, allowed, cand, cand_cost, cand_count, v, slack, reach, block):
            return -1
    elif not start(fee, allowed, cand, cand_cost, cand_count, v, slack, reach, block):
        return -1
    active = np.empty(v.shape[0], dtype=np.int64)
    ascend(order, -1, allowed, cand, cand_cost, cand_count, v, slack, reach, block, active)
    if with_adjust:
        adjust(order, allowed, cand, cand_cost, cand_count, v, slack, reach, block)
    if not feasible(fee, allowed, cand, cand_cost, cand_count, v):
        return -2
    total = 0
    for i in range(v.shape[0]):
        total += v[i]
    return total
