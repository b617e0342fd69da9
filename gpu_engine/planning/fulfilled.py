"""The planner's route for version 2 carts (several nodes for a merchant, or weight tiers).

Simple carts go through the planner's measured routes (:mod:`gpu_engine.planning.plan`). A
version 2 cart has fewer exact methods that price it: exhaustive search (CPU, or the GPU where
one is idle) when every assignment fits a share of the budget; the flat solver where every
merchant's cost is facility location; the merchant DP where it is predicted to fit; else the
anytime search (:mod:`gpu_engine.planning.fulfilled_search`). The best answer wins; it is proven
by exhaustion, the flat solver, the DP, or HiGHS (whose claim :mod:`gpu_engine.certify` checks).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from gpu_engine.planning import rates, tuning
from gpu_engine.planning.clock import Deadline, now
from gpu_engine.planning.fulfilled_search import phase
from gpu_engine.problem import CartProblem
from gpu_engine.solution import Solution

logger = logging.getLogger(__name__)

# The version 2 exhaustive search is this many times slower than version 1's measured rate
# (per-column parcels and per-merchant terms; gpu_engine/solvers/full/cpu.py and cuda_parcels.py
# measured it, BENCHMARKS.md "Pricing v2").
CPU_SLOWDOWN = 4.0
GPU_SLOWDOWN = 2.5


def full_rate(device: str) -> float:
    """Assignments priced per second by the version 2 exhaustive search on ``device``."""
    if device == "gpu":
        return rates.gpu_full_rate() / GPU_SLOWDOWN
    return rates.cpu_full_rate() / CPU_SLOWDOWN


# The exhaustive search takes at most this share of the budget.
FULL_SHARE = 0.5
# The flat solver's share of the budget where the cart is facility location; an unproven
# answer leaves the rest to the other methods.
FLAT_SHARE = 0.5
# The subset DP holds 2^lines states: past this many lines it never fits a request's budget.
DP_MAX_LINES = 30


def solve_fulfilled(
    problem: CartProblem,
    *,
    budget_ms: float | None,
    seed: int,
    gpu_idle: bool,
) -> Solution:
    """The cheapest assignment of a version 2 cart within ``budget_ms`` (None: the default)."""
    budget = tuning.DEFAULT_BUDGET_MS if budget_ms is None else float(budget_ms)
    deadline = Deadline(now(), budget)
    exhaustive = _exhaustive_device(problem, budget, gpu_idle)
    if exhaustive is not None:
        solution = _full(problem, exhaustive, deadline)
        why = f"{problem.complexity} assignments fit {FULL_SHARE:.0%} of the budget"
        return _planned(solution, f"{exhaustive}-full", why, deadline, [])
    flat = _flat(problem, deadline)
    if flat is not None and flat.optimal:
        why = "every merchant is an opening cost plus per-line costs: facility location"
        return _planned(flat, "flat", why, deadline, [])
    dp_ms = _dp_predicted_ms(problem, gpu_idle)
    if dp_ms is not None and dp_ms <= FULL_SHARE * budget:
        from gpu_engine.solvers.dp.solve import solve_dp

        device = "gpu" if gpu_idle else "cpu"
        solution = solve_dp(problem, budget_ms=deadline.remaining_ms(), device=device)
        if solution.optimal:
            why = f"the merchant DP predicted {dp_ms:.0f} ms"
            return _planned(solution, f"{device}-dp", why, deadline, [])
    searched = _searched(problem, deadline, seed, "gpu" if gpu_idle else "cpu")
    if flat is not None and flat.total < searched.total:
        why = "the flat solver's answer (unproven) beat the search's"
        return _planned(flat, "flat", why, deadline, (searched.plan or {}).get("ran", []))
    return searched


def _flat(problem: CartProblem, deadline: Deadline) -> Solution | None:
    """The flat solver's answer where the cart is facility location (None where it is not);
    it proves most such carts in a few ms, on a share of the budget."""
    from gpu_engine.solvers.flat.data import is_flat
    from gpu_engine.solvers.flat.solve import solve_flat_solution

    if not is_flat(problem):
        return None
    return solve_flat_solution(problem, budget_ms=FLAT_SHARE * deadline.remaining_ms())


def _dp_predicted_ms(problem: CartProblem, gpu_idle: bool) -> float | None:
    """The subset DP's predicted time on this cart (None: it does not fit its limits)."""
    from gpu_engine.problem import CapacityError
    from gpu_engine.solvers.dp.owner_inputs import owner_rows
    from gpu_engine.solvers.dp.solve_v2 import predicted_ms_v2, relaxed_steps_v2

    if problem.n_items > DP_MAX_LINES:
        return None
    try:
        rows = owner_rows(problem)
    except CapacityError:
        return None
    return predicted_ms_v2(rows, relaxed_steps_v2(problem), use_gpu=gpu_idle)


def _exhaustive_device(problem: CartProblem, budget_ms: float, gpu_idle: bool) -> str | None:
    for device in ("cpu", "gpu") if not gpu_idle else ("gpu", "cpu"):
        if device == "gpu" and not gpu_idle:
            continue
        predicted_ms = problem.complexity / full_rate(device) * 1e3
        if predicted_ms <= FULL_SHARE * budget_ms:
            return device
    return None


def _full(problem: CartProblem, device: str, deadline: Deadline) -> Solution:
    if device == "gpu":
        from gpu_engine.solvers.full.cuda import solve_gpu_full

        return solve_gpu_full(problem, budget_ms=deadline.remaining_ms())
    from gpu_engine.solvers.full.cpu import solve_cpu_full

    return solve_cpu_full(problem, budget_ms=deadline.remaining_ms())


def _searched(problem: CartProblem, deadline: Deadline, seed: int, device: str) -> Solution:
    from gpu_engine.planning.fulfilled_search import ga_lp_highs

    best, ran = ga_lp_highs(problem, deadline, seed, device)
    why = "GA incumbent, the LP's lines step, then HiGHS's proof"
    return _planned(best, best.algorithm, why, deadline, ran)


def _planned(
    solution: Solution, method: str, why: str, deadline: Deadline, ran: list[dict[str, Any]]
) -> Solution:
    plan = {
        "method": method,
        "why": why,
        "fulfillment": "version 2: nodes or weight tiers",
        "budget_ms": deadline.budget_ms,
        "ran": ran or [phase(method, solution)],
    }
    return replace(solution, plan=plan, elapsed_ms=deadline.spent_ms())
