"""The exact subset DP on version 2 carts (several nodes a merchant, weight tiers): plan, run on
CPU or GPU, prove, fall back. Version 1 carts never come here (:func:`solve.solve_dp`).

The DP runs over merchants (owners), not columns: ``h_o(S) = min over T in S & A_o of
h_{o-1}(S - T) + c_o(T)``, with ``c_o(T)`` the owner's exact cost for the line set ``T``
minimised over every split of ``T`` over its nodes (:mod:`gpu_engine.solvers.dp.owners`). The
layer step is version 1's, on the CPU (``merchant_states``) and on the GPU (``run_layers``);
only the tables differ, and they are built on the host.

The relaxed partition DP ``f(S) = min g(T) + f(S - T)`` with ``g(T) = min_o c_o(T)`` is still a
lower bound (the optimum splits its lines by owner, each part costing at least ``g``); its
merged answer is accepted only when it re-prices at that bound.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from gpu_engine.budget import check_budget, deadline, expired, refuse_if_far_over
from gpu_engine.device import resolve_device
from gpu_engine.planning.profile import load_profile
from gpu_engine.pricing import total_of
from gpu_engine.problem import CapacityError, CartProblem
from gpu_engine.solution import Solution
from gpu_engine.solvers.dp import ops as dp_ops
from gpu_engine.solvers.dp.common import (
    CPU_MEMORY_LIMIT,
    GPU_MIN_STEPS,
    SLICE_STEPS,
    finish,
)
from gpu_engine.solvers.dp.cpu import merchant_states, relaxed_states, relaxed_tables
from gpu_engine.solvers.dp.owner_inputs import (
    OwnerDPInputs,
    OwnerRows,
    owner_dp_inputs,
    owner_rows,
    owner_tables_of,
    relaxed_placements,
)
from gpu_engine.solvers.dp.owners import relaxed_owner_groups

# f, pick, g, g_entry (int64) and g_owner (int32) per subset of the cart's lines.
RELAXED_BYTES_PER_STATE = 36
# Placements priced a second while the tables are built (owner_inputs.MAX_OWNER_STATES: 50-65
# ns each measured on one shared core); the rate profile has no entry for them yet.
PLACEMENT_RATE = 2e7


def relaxed_steps_v2(problem: CartProblem) -> tuple[int, int] | None:
    """The relaxed DP's (partition walk steps, tables' placements); None when it does not fit
    (memory, or an owner's placements over the limit)."""
    if RELAXED_BYTES_PER_STATE << problem.n_items > CPU_MEMORY_LIMIT:
        return None
    placements = relaxed_placements(problem)
    if placements is None:
        return None
    return 3**problem.n_items // 2, placements


def run_relaxed_v2(
    problem: CartProblem, at: float | None = None
) -> tuple[int, np.ndarray, int] | None:
    """(bound, merged assignment as a column per line, its priced total) of the relaxed
    partition DP; None when the deadline ``at`` passed first."""
    inputs = owner_dp_inputs(problem, every_line_free=True)
    k = inputs.k
    size = 1 << k
    g, g_entry, g_owner = relaxed_owner_groups(
        k, inputs.n_lines, inputs.lines, inputs.table_off, inputs.cost
    )
    f, pick = relaxed_tables(k)
    per_slice = max(64, int(SLICE_STEPS / max(1.0, 1.5**k / 2)))
    for lo in range(1, size, per_slice):
        if expired(at):
            return None
        relaxed_states(lo, min(size, lo + per_slice), g, f, pick)
    entries = []
    s = size - 1
    while s:
        t = int(pick[s])
        row = int(g_owner[t])
        entries.append((row, int(g_entry[t]) - int(inputs.table_off[row])))
        s ^= t
    choice = np.full(problem.n_items, -1, dtype=np.int64)
    for row, entry in entries:
        for line, column in inputs.placement(row, entry):
            choice[line] = column
    return int(f[size - 1]), choice, total_of(problem, choice)


def run_owner_cpu(inputs: OwnerDPInputs, at: float | None = None) -> tuple[int, list[int]] | None:
    """(total, each layer's chosen table entry) of the exact owner DP on the CPU, layer by
    layer in slices; None when the deadline ``at`` passed first."""
    k = inputs.k
    size = 1 << k
    h = np.full(size, dp_ops.INF, dtype=np.int64)
    h[0] = 0
    pick = np.empty((inputs.n_layers, size), dtype=inputs.pick_dtype())
    for m in range(inputs.n_layers):
        cost = inputs.cost[inputs.table_off[m] : inputs.table_off[m + 1]]
        per_slice = max(64, int(SLICE_STEPS / 1.5 ** int(inputs.n_lines[m])))
        for hi in range(size, 0, -per_slice):
            if expired(at):
                return None
            merchant_states(
                m,
                hi,
                max(0, hi - per_slice),
                inputs.mask[m],
                inputs.n_lines,
                inputs.lines,
                h,
                cost,
                pick,
            )
    return int(h[size - 1]) + inputs.constant, layer_entries(inputs, pick)


def layer_entries(inputs: OwnerDPInputs, pick: np.ndarray) -> list[int]:
    """Each layer's chosen table entry, walking the layers back from the full line set."""
    s = (1 << inputs.k) - 1
    entries = [0] * inputs.n_layers
    for m in range(inputs.n_layers - 1, -1, -1):
        tc = int(pick[m, s])
        entries[m] = tc
        for b in range(int(inputs.n_lines[m])):
            if (tc >> b) & 1:
                s ^= 1 << int(inputs.lines[m, b])
    return entries


def predicted_ms_v2(
    plan: OwnerRows | OwnerDPInputs, relaxed: tuple[int, int] | None, use_gpu: bool
) -> float:
    """The DP's predicted time from the rate profile: the cheaper program (the one that runs
    first), each with its tables' placements at :data:`PLACEMENT_RATE`. ``relaxed``: the
    relaxed DP's (walk steps, placements), None when it does not fit."""
    profile = load_profile()
    layer_rate = profile.gpu_dp_rate if use_gpu else profile.cpu_dp_rate
    exact = (plan.layer_steps() / layer_rate + plan.placements / PLACEMENT_RATE) * 1e3
    if relaxed is None:
        return exact
    walk, placements = relaxed
    return min(exact, (walk / profile.relaxed_dp_rate + placements / PLACEMENT_RATE) * 1e3)


def solve_dp_v2(
    problem: CartProblem, *, budget_ms: float | None = None, device: str = "auto"
) -> Solution:
    """:func:`gpu_engine.solvers.dp.solve.solve_dp` for version 2 carts, with the same
    ``device`` and ``budget_ms`` contract. Raises :class:`CapacityError` when an owner's
    placements exceed the tables' limit (``owner_inputs.MAX_OWNER_STATES``) or the DP's
    tables its memory."""
    budget_ms = check_budget(budget_ms)
    t0 = time.perf_counter()
    at = deadline(t0, budget_ms)
    # Who ships what first (cheap); the tables are priced only once the DP is sure to run.
    plan = owner_rows(problem)
    use_gpu = (
        plan.k > 0
        and resolve_device(device) == "cuda"
        and (device != "auto" or plan.layer_steps() >= GPU_MIN_STEPS)
    )
    relaxed_plan = relaxed_steps_v2(problem)
    refuse_if_far_over("dp", predicted_ms_v2(plan, relaxed_plan, use_gpu), budget_ms)
    r_steps = None if relaxed_plan is None else sum(relaxed_plan)
    stats: dict[str, Any] = {
        "merchant_dp_steps": plan.steps(),
        "free_lines": plan.k,
        "placements": plan.placements,
        "relaxed_dp_steps": r_steps,
    }
    fits = _fits(plan, use_gpu)
    relaxed = None
    if r_steps is not None and (r_steps <= plan.steps() or not fits):
        relaxed = run_relaxed_v2(problem, at)
        if relaxed is None:
            return _cut(problem, None, t0, stats)
        bound, choice, priced = relaxed
        stats.update(relaxed_bound=bound, relaxed_priced=priced)
        if priced == bound:
            stats["path"] = "relaxed-partition"
            stats["proof"] = "relaxed optimum is feasible: it prices at the lower bound"
            return _done(problem, choice, priced, True, "cpu", t0, stats)
        if not fits:
            stats["path"] = "relaxed-partition"
            stats["proof"] = None
            gap = (priced - bound) / priced if priced else 0.0
            return _done(problem, choice, priced, False, "cpu", t0, stats, gap=gap)
        stats["fallback"] = "relaxed optimum prices above its bound (split owners re-priced)"
    stats["path"] = "merchant-dp"
    stats["proof"] = "exact owner-by-owner DP over every node split"
    if not fits:
        where = "GPU" if use_gpu else "CPU"
        raise CapacityError(
            "items",
            problem.n_items,
            f"the subset DP needs {plan.memory_bytes()} bytes for the {plan.k} lines that "
            f"several merchants sell in this {problem.n_items}-line cart, more than the "
            f"{where} allows it",
        )
    inputs = owner_tables_of(problem, plan)
    if use_gpu:
        from gpu_engine.solvers.dp.cuda import run_owner_gpu

        done = run_owner_gpu(inputs, at)
        if done is None:
            return _cut(problem, relaxed, t0, stats)
        layers_total, entries, device_name = done
        choice = inputs.choice(problem.n_items, entries)
        total = layers_total + inputs.constant
        return _done(problem, choice, total, True, device_name, t0, stats)
    exact = run_owner_cpu(inputs, at)
    if exact is None:
        return _cut(problem, relaxed, t0, stats)
    total, entries = exact
    return _done(problem, inputs.choice(problem.n_items, entries), total, True, "cpu", t0, stats)


def _fits(plan: OwnerRows, use_gpu: bool) -> bool:
    if use_gpu:
        from gpu_engine.solvers.dp.cuda import gpu_memory_limit

        return plan.memory_bytes() + (8 << plan.k) <= gpu_memory_limit()
    return plan.memory_bytes() <= CPU_MEMORY_LIMIT


def _cut(
    problem: CartProblem,
    relaxed: tuple[int, np.ndarray, int] | None,
    t0: float,
    stats: dict[str, Any],
) -> Solution:
    """The budget ran out inside a DP: the relaxed DP's merged assignment when it finished
    (with its proven gap), else every line at its cheapest offer."""
    stats.update(cut=True, proof=None)
    if relaxed is not None:
        bound, choice, priced = relaxed
        gap = (priced - bound) / priced if priced else 0.0
        return _done(problem, choice, priced, False, "cpu", t0, stats, gap=gap)
    stats["path"] = "cheapest-offer (DP cut by the budget)"
    choice = problem.cand_merchant[:, 0].astype(np.int64)
    return _done(problem, choice, total_of(problem, choice), False, "cpu", t0, stats)


def _done(
    problem: CartProblem,
    choice: np.ndarray,
    total: int,
    optimal: bool,
    device: str,
    t0: float,
    stats: dict[str, Any],
    gap: float | None = None,
) -> Solution:
    elapsed_ms = (time.perf_counter() - t0) * 1e3
    return finish(problem, choice, total, optimal, device, elapsed_ms, stats, gap=gap)
