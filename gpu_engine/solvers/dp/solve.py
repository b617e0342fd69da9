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

from gpu_engine.device import resolve_device
from gpu_engine.pricing import assignment_cost
from gpu_engine.problem import CapacityError, CartProblem
from gpu_engine.results import make_solution
from gpu_engine.solution import Solution
from gpu_engine.solvers.dp.cpu import dp_inputs, merchant_dp, relaxed_partition_dp
from gpu_engine.solvers.dp.inputs import MerchantDPInputs, expand_choice, merchant_dp_inputs

# Host memory the CPU DPs may take (tables of 2^k entries).
CPU_MEMORY_LIMIT = 2 << 30
# Below this many steps the CPU answers faster than a GPU launch sequence.
GPU_MIN_STEPS = 4_000_000
# Merchants whose cost is provably subadditive let the relaxed DP's value stand on its own.
RELAXED_BYTES_PER_STATE = 24


def relaxed_steps(problem: CartProblem) -> int:
    return 3**problem.n_items // 2 + int(np.sum(2.0 ** (problem.price >= 0).sum(axis=0)))


def relaxed_memory(problem: CartProblem) -> int:
    return RELAXED_BYTES_PER_STATE << problem.n_items


def run_relaxed(problem: CartProblem) -> tuple[int, np.ndarray, int]:
    """(bound, merged assignment, its priced total) of the relaxed partition DP."""
    mask, n_lines, lines, amount, units = dp_inputs(
        problem.quantity, problem.price, np.arange(problem.n_items, dtype=np.int64)
    )
    bound, choice = relaxed_partition_dp(
        problem.n_items, mask, n_lines, lines, amount, units, problem.merchant_params
    )
    priced = assignment_cost(choice, problem.quantity, problem.price, *problem.merchant_params)
    return int(bound), choice, int(priced)


def run_merchant_cpu(problem: CartProblem, inputs: MerchantDPInputs) -> tuple[int, np.ndarray]:
    pick = np.empty((inputs.merchants.size, 1 << inputs.k), dtype=inputs.pick_dtype())
    total, free_choice = merchant_dp(
        inputs.k,
        inputs.mask,
        inputs.n_lines,
        inputs.lines,
        inputs.amount,
        inputs.units,
        inputs.sub0,
        inputs.units0,
        inputs.params,
        pick,
    )
    return int(total), expand_choice(problem, inputs, free_choice)


def solve_dp(
    problem: CartProblem, *, budget_ms: float | None = None, device: str = "auto"
) -> Solution:
    """Exact subset DP. ``device``: "cpu", "gpu" or "auto" (GPU for large merchant DPs when a
    real GPU is present, :func:`gpu_engine.device.resolve_device`; "gpu" also runs in the
    simulator). ``budget_ms`` is advisory: DP has no useful partial answer."""
    del budget_ms
    t0 = time.perf_counter()
    inputs = merchant_dp_inputs(problem)
    exact_steps = inputs.steps()
    use_gpu = resolve_device(device) == "cuda" and (
        device != "auto" or exact_steps >= GPU_MIN_STEPS
    )
    stats: dict[str, Any] = {"merchant_dp_steps": exact_steps, "free_lines": inputs.k}
    relaxed_ok = relaxed_memory(problem) <= CPU_MEMORY_LIMIT
    r_steps = relaxed_steps(problem) if relaxed_ok else None
    stats["relaxed_dp_steps"] = r_steps
    if r_steps is not None and (r_steps <= exact_steps or not _merchant_fits(inputs, use_gpu)):
        bound, choice, priced = run_relaxed(problem)
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

        total, choice, device_name = run_merchant_gpu(problem, inputs)
        return _finish(problem, choice, total, True, device_name, t0, stats)
    _check_memory(inputs.memory_bytes(), CPU_MEMORY_LIMIT)
    total, choice = run_merchant_cpu(problem, inputs)
    return _finish(problem, choice, total, True, "cpu", t0, stats)


def _merchant_fits(inputs: MerchantDPInputs, use_gpu: bool) -> bool:
    if use_gpu:
        from gpu_engine.solvers.dp.cuda import gpu_memory_limit

        return inputs.memory_bytes() <= gpu_memory_limit()
    return inputs.memory_bytes() <= CPU_MEMORY_LIMIT


def _check_memory(needed: int, limit: int) -> None:
    if needed > limit:
        raise CapacityError(
            "items", needed, f"subset DP needs {needed} bytes, more than its limit of {limit}"
        )


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
    return make_solution(
        problem,
        choice,
        total=total,
        optimal=optimal,
        algorithm="dp",
        device=device,
        elapsed_ms=(time.perf_counter() - t0) * 1e3,
        gap=gap,
        stats=stats,
    )
