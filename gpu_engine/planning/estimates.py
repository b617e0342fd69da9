"""Estimates: every method's predicted time on a cart, from the cart's features (lines, offers,
complexity, subset-DP steps, (line, merchant) pairs, merchants with threshold or discount
switches) and this machine's measured rates (:mod:`gpu_engine.planning.profile`). Pure
functions of the problem, the profile and the GPU's state."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from gpu_engine.planning import tuning
from gpu_engine.planning.profile import PowerLaw, RateProfile
from gpu_engine.problem import INT64_MAX, CartProblem
from gpu_engine.solvers.milp.model import HIGHS_MAX_MONEY, highs_trusted, money_scale

HIGHS_UNTRUSTED = f"amounts beyond HiGHS's exact range ({HIGHS_MAX_MONEY:.0e} cents a merchant)"


@dataclass(frozen=True)
class Estimate:
    """One method's predicted time in ms (None: not applicable here, see ``note``)."""

    method: str
    exact: bool
    predicted_ms: float | None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class GpuState:
    """What the caller knows about the GPU: present here, allowed, and its queue."""

    present: bool
    busy: bool = False
    queue_depth: int = 0

    def wait_ms(self, profile: RateProfile) -> float:
        jobs = max(self.queue_depth, 1 if self.busy else 0)
        return jobs * profile.gpu_job_ms


def cart_features(problem: CartProblem) -> dict[str, Any]:
    """The features the planner predicts from."""
    counts = problem.cand_count.astype(np.int64)
    usable = problem.cand_merchant[problem.cand_merchant >= 0]
    merchants = np.unique(usable)
    switched = bool(np.any(problem.disc_min_units[merchants] > 0)) or bool(
        np.any(
            (problem.free_over[merchants] > 0)
            & ((problem.base_fee[merchants] > 0) | (problem.per_extra_unit[merchants] > 0))
        )
    )
    return {
        "lines": problem.n_items,
        "free_lines": int(np.count_nonzero(counts > 1)),
        "merchants": int(merchants.size),
        "pairs": int(counts.sum()),
        "offers_mean": float(counts.mean()),
        "offers_max": int(counts.max()),
        "log10_complexity": math.log10(problem.complexity),
        "switched": switched,
        # The largest amount one row of the MILP holds: HiGHS runs only while it is trusted.
        "money": money_scale(problem),
    }


def estimate_all(
    problem: CartProblem,
    budget_ms: float,
    profile: RateProfile,
    gpu: GpuState,
    features: dict[str, Any],
) -> list[Estimate]:
    """Every method's estimate, in the order the plan reports them."""
    return [
        *_full_estimates(problem, profile, gpu, features),
        *_dp_estimates(problem, profile, gpu, features),
        _flat_estimate(problem, profile, features),
        _milp_estimate(profile, features),
        *_ga_estimates(budget_ms, profile, gpu, features),
    ]


def highs_runs(features: dict[str, Any]) -> bool:
    """HiGHS is exact on this cart (:func:`gpu_engine.solvers.milp.model.highs_trusted`)."""
    return highs_trusted(features.get("money", 0.0))


def proof_floor_ms(features: dict[str, Any], profile: RateProfile) -> float:
    """The least time HiGHS is started with after a GA: its presolve alone can outlast less."""
    flat_ms = profile.milp_overhead_ms + profile.milp_flat(features["pairs"])
    return max(tuning.MIN_PROOF_MS, tuning.PROOF_FLOOR_FACTOR * flat_ms)


def gpu_ga_fits(features: dict[str, Any]) -> bool:
    """The cart fits the GPU GA's kernels (lines and merchants in shared memory)."""
    from gpu_engine.solvers.ga.cuda import MAX_LINES, MAX_MERCHANTS

    return features["lines"] <= MAX_LINES and features["merchants"] <= MAX_MERCHANTS


def _full_estimates(problem, profile, gpu: GpuState, features) -> list[Estimate]:
    if problem.complexity > INT64_MAX:
        note = "more assignments than int64 numbers"
        return [Estimate("cpu-full", True, None, note), Estimate("gpu-full", True, None, note)]
    cpu_ms = profile.cpu_full_overhead_ms + problem.complexity / profile.cpu_full_rate * 1e3
    estimates = [Estimate("cpu-full", True, cpu_ms)]
    if not gpu.present:
        estimates.append(Estimate("gpu-full", True, None, "no GPU"))
        return estimates
    from gpu_engine.solvers.full.cuda import MAX_FLAT, MAX_LINES, MERCHANT_BUCKETS

    counts = problem.cand_count
    if features["free_lines"] > MAX_LINES or int(counts[counts > 1].sum()) > MAX_FLAT:
        estimates.append(Estimate("gpu-full", True, None, "beyond the kernel's shared memory"))
    elif features["merchants"] > MERCHANT_BUCKETS[-1]:
        estimates.append(Estimate("gpu-full", True, None, "too many merchants for the kernel"))
    else:
        gpu_ms = profile.gpu_full_overhead_ms + problem.complexity / profile.gpu_full_rate * 1e3
        estimates.append(Estimate("gpu-full", True, gpu_ms + gpu.wait_ms(profile)))
    return estimates


def _dp_estimates(problem, profile, gpu: GpuState, features) -> list[Estimate]:
    """Mirrors ``gpu_engine.solvers.dp.solve.solve_dp``: the relaxed DP first when it is cheaper,
    accepted only when every merchant's cost is subadditive (otherwise the exact DP runs after
    it)."""
    if features["free_lines"] > tuning.MAX_DP_FREE_LINES:
        note = f"more than {tuning.MAX_DP_FREE_LINES} free lines"
        return [Estimate("cpu-dp", True, None, note), Estimate("gpu-dp", True, None, note)]
    from gpu_engine.solvers.dp.solve import (
        CPU_MEMORY_LIMIT,
        merchant_dp_inputs,
        relaxed_memory,
        relaxed_steps,
    )

    inputs = merchant_dp_inputs(problem)
    exact_steps = inputs.steps()
    relaxed = relaxed_steps(problem) if relaxed_memory(problem) <= CPU_MEMORY_LIMIT else None
    relaxed_ms = None if relaxed is None else relaxed / profile.relaxed_dp_rate * 1e3
    relaxed_enough = _subadditive(problem)
    out = []
    for method, rate, overhead, fits in (
        (
            "cpu-dp",
            profile.cpu_dp_rate,
            profile.dp_overhead_ms,
            inputs.memory_bytes() <= CPU_MEMORY_LIMIT,
        ),
        ("gpu-dp", profile.gpu_dp_rate, profile.gpu_dp_overhead_ms, True),
    ):
        if method == "gpu-dp" and not gpu.present:
            out.append(Estimate(method, True, None, "no GPU"))
            continue
        exact_ms = exact_steps / rate * 1e3 if fits else math.inf
        if relaxed is not None and relaxed_ms is not None and (relaxed <= exact_steps or not fits):
            ms = relaxed_ms + (0.0 if relaxed_enough else exact_ms)
        else:
            ms = exact_ms
        if method == "gpu-dp":
            ms += gpu.wait_ms(profile)
        if math.isfinite(ms):
            out.append(Estimate(method, True, overhead + ms))
        else:
            out.append(Estimate(method, True, None, "tables exceed the memory limit"))
    return out


def _subadditive(problem: CartProblem) -> bool:
    """Every merchant's cost is subadditive (two shipments never beat one): then the relaxed
    partition DP's optimum is feasible and the exact DP is not needed."""
    extra_over_base = problem.per_extra_unit > problem.base_fee
    discount_vs_threshold = (problem.disc_min_units > 0) & (problem.free_over > 0)
    return not bool(np.any(extra_over_base | discount_vs_threshold))


def _flat_estimate(problem: CartProblem, profile: RateProfile, features) -> Estimate:
    """The flat-cart solver (:mod:`gpu_engine.solvers.flat`): where every merchant is an opening
    cost plus per-line costs, facility location's dual ascent proves most carts at its root."""
    from gpu_engine.solvers.flat.data import is_flat

    if not is_flat(problem):
        return Estimate("flat", True, None, "a merchant's cost is not opening + per-line costs")
    ms = profile.flat_overhead_ms + profile.flat_ms_per_pair * features["pairs"]
    return Estimate("flat", True, ms, "facility location: dual ascent, then branch and bound")


def _milp_law(profile: RateProfile, features) -> PowerLaw:
    return profile.milp_switched if features["switched"] else profile.milp_flat


def _milp_estimate(profile: RateProfile, features) -> Estimate:
    if not highs_runs(features):
        return Estimate("milp", True, None, HIGHS_UNTRUSTED)
    ms = profile.milp_overhead_ms + _milp_law(profile, features)(features["pairs"])
    return Estimate("milp", True, ms, "HiGHS alone, one thread")


def _ga_estimates(budget_ms, profile, gpu: GpuState, features) -> list[Estimate]:
    cpu_init = profile.ga_cpu_init_ms_per_line * features["lines"]
    out = [Estimate("cpu-ga", False, max(budget_ms, cpu_init), "runs for the budget")]
    if not gpu.present:
        out.append(Estimate("gpu-ga", False, None, "no GPU"))
        return out
    from gpu_engine.solvers.ga.cuda import MAX_LINES, MAX_MERCHANTS

    if features["lines"] > MAX_LINES or features["merchants"] > MAX_MERCHANTS:
        out.append(Estimate("gpu-ga", False, None, "beyond the kernel's shared memory"))
        return out
    wait = gpu.wait_ms(profile)
    note = "runs for the budget"
    if wait > tuning.GPU_GA_MAX_WAIT_SHARE * budget_ms:
        note = f"GPU queue wait {wait:.0f} ms leaves too little of the budget"
        out.append(Estimate("gpu-ga", False, None, note))
    else:
        out.append(Estimate("gpu-ga", False, max(budget_ms, profile.ga_gpu_init_ms), note))
    return out
