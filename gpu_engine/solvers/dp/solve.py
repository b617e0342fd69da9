"""Exact subset DP solver: plan, run on CPU or GPU, prove, fall back.

The relaxed partition DP is fast on dense carts but only a lower bound; the merchant-by-merchant
DP is always exact and fast on sparse carts. The plan counts the steps of both; the relaxed one
runs first when cheaper, and its answer is accepted only when the assignment it implies (one
merchant's groups merged) prices exactly at its bound. That check is the per-problem detection
of the partition DP's blind spot (non-subadditive merchants: ``per_extra_unit > base_fee``, a
discount pushing goods under ``free_over``); when it fails the exact DP answers instead.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from gpu_engine.budget import check_budget, deadline, expired, refuse_if_far_over
from gpu_engine.device import resolve_device
from gpu_engine.planning.profile import load_profile
from gpu_engine.pricing import assignment_cost
from gpu_engine.problem import CartProblem
from gpu_engine.solution import Solution
from gpu_engine.solvers.dp.common import (
    CPU_MEMORY_LIMIT,
    GPU_MIN_STEPS,
    SLICE_STEPS,
    check_memory,
    finish,
)
from gpu_engine.solvers.dp.cpu import (
    dp_inputs,
    merchant_backtrack,
    merchant_states,
    merchant_tables,
    relaxed_backtrack,
    relaxed_groups,
    relaxed_states,
    relaxed_tables,
    subset_costs,
)
from gpu_engine.solvers.dp.inputs import MerchantDPInputs, expand_choice, merchant_dp_inputs
from gpu_engine.solvers.dp.solve_v2 import solve_dp_v2

# Merchants whose cost is provably subadditive let the relaxed DP's value stand on its own.
RELAXED_BYTES_PER_STATE = 24


def relaxed_steps(problem: CartProblem) -> int:
    return 3**problem.n_items // 2 + int(np.sum(2.0 ** (problem.price >= 0).sum(axis=0)))


def relaxed_memory(problem: CartProblem) -> int:
    return RELAXED_BYTES_PER_STATE << problem.n_items


def run_relaxed(
    problem: CartProblem, at: float | None = None
) -> tuple[int, np.ndarray, int] | None:
    """(bound, merged assignment, its priced total) of the relaxed partition DP; None when the
    deadline ``at`` (a ``time.perf_counter()`` value) passed first."""
    k = problem.n_items
    mask, n_lines, lines, amount, units = dp_inputs(
        problem.quantity, problem.price, np.arange(k, dtype=np.int64)
    )
    g, g_merchant = relaxed_groups(k, mask, n_lines, lines, amount, units, problem.merchant_params)
    f, pick = relaxed_tables(k)
    size = 1 << k
    # A line set of p lines tries 2^(p-1) groups: (3/2)^k / 2 on average.
    per_slice = max(64, int(SLICE_STEPS / max(1.0, 1.5**k / 2)))
    for lo in range(1, size, per_slice):
        if expired(at):
            return None
        relaxed_states(lo, min(size, lo + per_slice), g, f, pick)
    choice = relaxed_backtrack(k, f, pick, g_merchant)
    priced = assignment_cost(choice, problem.quantity, problem.price, *problem.merchant_params)
    return int(f[size - 1]), choice, int(priced)


def run_merchant_cpu(
    problem: CartProblem, inputs: MerchantDPInputs, at: float | None = None
) -> tuple[int, np.ndarray] | None:
    """(total, merchant per line) of the exact merchant DP on the CPU, layer by layer in
    slices; None when the deadline ``at`` passed first."""
    k = inputs.k
    size = 1 << k
    pick = np.empty((inputs.merchants.size, size), dtype=inputs.pick_dtype())
    h, cost, tmask = merchant_tables(k, inputs.n_lines)
    for m in range(inputs.merchants.size):
        a = int(inputs.n_lines[m])
        subset_costs(
            m,
            inputs.n_lines,
            inputs.amount,
            inputs.units,
            inputs.sub0[m],
            inputs.units0[m],
            inputs.params,
            cost,
            tmask,
            inputs.lines,
        )
        # A line set tries the submasks of its part of merchant m's a lines: (3/2)^a on average.
        per_slice = max(64, int(SLICE_STEPS / 1.5**a))
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
    free_choice = merchant_backtrack(k, inputs.n_lines, inputs.lines, pick)
    return int(h[size - 1]), expand_choice(problem, inputs, free_choice)


def predicted_ms(problem: CartProblem, inputs: MerchantDPInputs, use_gpu: bool) -> float:
    """The DP's predicted time from the rate profile: the cheaper program (the one that runs
    first)."""
    profile = load_profile()
    exact_rate = profile.gpu_dp_rate if use_gpu else profile.cpu_dp_rate
    exact = inputs.steps() / exact_rate * 1e3
    if relaxed_memory(problem) > CPU_MEMORY_LIMIT:
        return exact
    return min(exact, relaxed_steps(problem) / profile.relaxed_dp_rate * 1e3)


def solve_dp(
    problem: CartProblem, *, budget_ms: float | None = None, device: str = "auto"
) -> Solution:
    """Exact subset DP. ``device``: "cpu", "gpu" or "auto" (GPU for large merchant DPs when a
    real GPU is present, :func:`gpu_engine.device.resolve_device`; "gpu" also runs in the
    simulator). ``budget_ms``: refused up front (BudgetError) when the predicted time is far
    over it; otherwise the DPs check it between slices (CPU) or layers (GPU) and, once it is
    spent, answer with the best assignment known (the relaxed DP's, else each line's cheapest
    offer), flagged not optimal with ``stats["cut"]``. Version 2 carts (several nodes a
    merchant, weight tiers) take :func:`gpu_engine.solvers.dp.solve_v2.solve_dp_v2`."""
    if not problem.simple:
        return solve_dp_v2(problem, budget_ms=budget_ms, device=device)
    budget_ms = check_budget(budget_ms)
    t0 = time.perf_counter()
    at = deadline(t0, budget_ms)
    inputs = merchant_dp_inputs(problem)
    exact_steps = inputs.steps()
    use_gpu = resolve_device(device) == "cuda" and (
        device != "auto" or exact_steps >= GPU_MIN_STEPS
    )
    refuse_if_far_over("dp", predicted_ms(problem, inputs, use_gpu), budget_ms)
    stats: dict[str, Any] = {"merchant_dp_steps": exact_steps, "free_lines": inputs.k}
    relaxed_ok = relaxed_memory(problem) <= CPU_MEMORY_LIMIT
    r_steps = relaxed_steps(problem) if relaxed_ok else None
    stats["relaxed_dp_steps"] = r_steps
    relaxed = None
    if r_steps is not None and (r_steps <= exact_steps or not _merchant_fits(inputs, use_gpu)):
        relaxed = run_relaxed(problem, at)
        if relaxed is None:
            return _cut(problem, None, t0, stats)
        bound, choice, priced = relaxed
        stats.update(relaxed_bound=bound, relaxed_priced=priced)
        if priced == bound:
            stats["path"] = "relaxed-partition"
            stats["proof"] = "relaxed optimum is feasible: it prices at the lower bound"
            return _finish(problem, choice, priced, True, "cpu", t0, stats)
        if not _merchant_fits(inputs, use_gpu):
            stats["path"] = "relaxed-partition"
            stats["proof"] = None
            gap = (priced - bound) / priced if priced else 0.0
            return _finish(problem, choice, priced, False, "cpu", t0, stats, gap=gap)
        stats["fallback"] = "relaxed optimum prices above its bound (non-subadditive merchant)"
    stats["path"] = "merchant-dp"
    stats["proof"] = "exact merchant-by-merchant DP"
    if use_gpu:
        from gpu_engine.solvers.dp.cuda import run_merchant_gpu

        done = run_merchant_gpu(problem, inputs, at)
        if done is None:
            return _cut(problem, relaxed, t0, stats)
        total, choice, device_name = done
        return _finish(problem, choice, total, True, device_name, t0, stats)
    check_memory(inputs.memory_bytes(), CPU_MEMORY_LIMIT)
    exact = run_merchant_cpu(problem, inputs, at)
    if exact is None:
        return _cut(problem, relaxed, t0, stats)
    total, choice = exact
    return _finish(problem, choice, total, True, "cpu", t0, stats)


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
        return _finish(problem, choice, priced, False, "cpu", t0, stats, gap=gap)
    stats["path"] = "cheapest-offer (DP cut by the budget)"
    choice = problem.cand_merchant[:, 0].astype(np.int64)
    total = assignment_cost(choice, problem.quantity, problem.price, *problem.merchant_params)
    return _finish(problem, choice, int(total), False, "cpu", t0, stats)


def _merchant_fits(inputs: MerchantDPInputs, use_gpu: bool) -> bool:
    if use_gpu:
        from gpu_engine.solvers.dp.cuda import gpu_memory_limit

        return inputs.memory_bytes() <= gpu_memory_limit()
    return inputs.memory_bytes() <= CPU_MEMORY_LIMIT


def _finish(
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
