"""The planner: which solver answers ``gpu_engine.solve(problem, budget_ms=...)``.

Jet.com picked between full search and a GPU genetic algorithm with a learned decision function.
Here every solver's time is *predicted* from the cart's features (lines, offers, complexity,
subset-DP step counts, (line, merchant) pairs, whether merchants have threshold or discount
switches) and the machine's measured rates (:mod:`gpu_engine.planning.profile`), and the rule is
plain:

* an exact method runs whenever one is predicted to finish within the budget, the fastest of
  them (CPU or GPU full search, subset DP on CPU or GPU, the HiGHS MILP). Methods that cannot
  stop early (the DPs) must fit within ``UNINTERRUPTIBLE_SHARE`` of the budget; the others are
  handed the remaining budget and stop at it;
* otherwise, when the MILP's *optimistic* prediction (the quick end of HiGHS's measured spread,
  ``PowerLaw.optimistic``) fits the budget, a proof may well fit: the MILP route runs as for an
  exact fit, after a longer GA warm start (``UNCERTAIN_WARM_SHARE``), so that a proof cut by the
  budget still leaves a GA answer of that share's quality (never worse: HiGHS keeps the better
  of the two). HiGHS's times at one cart size spread over a factor of ten, so a point
  prediction alone misses the quick instances (one cart of 180 at 200 ms on the H200);
* otherwise the GA runs for the budget, on the GPU when one is present and its queue leaves
  room, else on the CPU. The time the GA leaves (it stops early when it stalls) goes to the
  MILP, warm-started with the GA's answer: it often proves that answer optimal, or improves it,
  on carts whose MILP time the profile over-predicts. When the MILP is predicted within
  ``PROOF_REACH`` x the budget, the GA gets only ``PROOF_GA_SHARE`` of it, to leave the proof a
  real chance. The answer is never worse than the GA's. The proof's time is a hard deadline
  (:func:`gpu_engine.solvers.milp.runner.milp_run`): HiGHS overshoots a short ``time_limit`` in
  its presolve, so a proof still running at the end of the budget is cut, the GA's answer stands
  unproven, and the plan records the cut (``plan["proof_after_ga"]``).

The GPU's state comes from the caller (the Celery side knows its queues): ``gpu_busy`` and
``gpu_queue_depth`` (values or callables) turn into a predicted wait of ``depth *
profile.gpu_job_ms`` added to every GPU method; ``allow_gpu=False`` keeps the solve off the GPU
(a CPU worker must not open a CUDA context in a forked process).

The MILP is warm-started: a short GA run (``WARM_START_SHARE`` of the budget) hands HiGHS its
incumbent, so a MILP stopped by the budget still returns an answer at least as good as the GA's,
with its proven gap. ``Solution.plan`` records the choice, the reason and every predicted time.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from gpu_engine.planning.profile import RateProfile, load_profile
from gpu_engine.problem import INT64_MAX, CapacityError, CartProblem
from gpu_engine.solution import Solution

logger = logging.getLogger(__name__)

DEFAULT_BUDGET_MS = 2000.0
# Share of the budget an uninterruptible exact method may be predicted to take.
UNINTERRUPTIBLE_SHARE = 0.8
# The GA's time before the MILP, to warm-start it: its seeded population and first elite pass
# are already within about 1% of the optimum on benchmark carts.
WARM_START_SHARE = 0.1
WARM_START_MAX_MS = 30.0
# The warm start when only the optimistic MILP prediction fits: the GA's answer is what stands
# if the proof is cut, so it gets more of the budget than before a predicted fit.
UNCERTAIN_WARM_SHARE = 0.2
UNCERTAIN_WARM_MAX_MS = 100.0
# The GPU GA only when the predicted wait for the GPU leaves most of the budget.
GPU_GA_MAX_WAIT_SHARE = 0.25
# After the GA, the MILP runs only when at least this much of the budget is left (ms), and at
# least PROOF_FLOOR_FACTOR times the time HiGHS takes on a flat cart of the same size: below
# that its presolve alone can outlast the budget (seen on the H200 host at a 200 ms budget).
MIN_PROOF_MS = 20.0
PROOF_FLOOR_FACTOR = 2.0
PROOF_REACH = 10.0
PROOF_GA_SHARE = 0.5
# Beyond this many free lines the subset DPs are astronomically slow: not even estimated.
MAX_DP_FREE_LINES = 40

EXACT_METHODS = ("cpu-full", "gpu-full", "cpu-dp", "gpu-dp", "milp")
INTERRUPTIBLE = frozenset({"cpu-full", "gpu-full", "milp"})


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


@dataclass(frozen=True)
class Plan:
    method: str
    reason: str
    budget_ms: float
    estimates: tuple[Estimate, ...]
    features: dict[str, Any]
    gpu: GpuState
    # The GA's share of the budget (the MILP tries to prove on the rest).
    ga_share: float = 1.0
    # The MILP route's GA warm start (ms); None: the default for the budget.
    warm_start_ms: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "reason": self.reason,
            "budget_ms": self.budget_ms,
            "ga_share": self.ga_share,
            "warm_start_ms": self.warm_start_ms,
            "predicted_ms": {e.method: e.predicted_ms for e in self.estimates},
            "notes": {e.method: e.note for e in self.estimates if e.note},
            "features": self.features,
            "gpu": asdict(self.gpu),
        }


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
    }


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
    if features["free_lines"] > MAX_DP_FREE_LINES:
        note = f"more than {MAX_DP_FREE_LINES} free lines"
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


def uncertain_warm_ms(budget_ms: float) -> float:
    return min(UNCERTAIN_WARM_SHARE * budget_ms, UNCERTAIN_WARM_MAX_MS)


def warm_start_ms(budget_ms: float) -> float:
    return min(WARM_START_MAX_MS, WARM_START_SHARE * budget_ms)


def _milp_law(profile: RateProfile, features):
    return profile.milp_switched if features["switched"] else profile.milp_flat


def _milp_estimate(budget_ms: float, profile: RateProfile, features) -> Estimate:
    ms = (
        warm_start_ms(budget_ms)
        + profile.milp_overhead_ms
        + _milp_law(profile, features)(features["pairs"])
    )
    return Estimate("milp", True, ms, "GA warm start, then HiGHS")


def milp_optimistic_ms(budget_ms: float, profile: RateProfile, features) -> float:
    """The MILP route's time on a quick instance of this size (after the longer warm start)."""
    law = _milp_law(profile, features)
    return (
        uncertain_warm_ms(budget_ms) + profile.milp_overhead_ms + law.optimistic(features["pairs"])
    )


def _ga_estimates(problem, budget_ms, profile, gpu: GpuState, features) -> list[Estimate]:
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
    if wait > GPU_GA_MAX_WAIT_SHARE * budget_ms:
        note = f"GPU queue wait {wait:.0f} ms leaves too little of the budget"
        out.append(Estimate("gpu-ga", False, None, note))
    else:
        out.append(Estimate("gpu-ga", False, max(budget_ms, profile.ga_gpu_init_ms), note))
    return out


def make_plan(
    problem: CartProblem,
    *,
    budget_ms: float,
    profile: RateProfile,
    gpu: GpuState,
) -> Plan:
    """Predict every method and choose (see the module docstring)."""
    features = cart_features(problem)
    estimates = [
        *_full_estimates(problem, profile, gpu, features),
        *_dp_estimates(problem, profile, gpu, features),
        _milp_estimate(budget_ms, profile, features),
        *_ga_estimates(problem, budget_ms, profile, gpu, features),
    ]
    fitting = [
        e
        for e in estimates
        if e.exact
        and e.predicted_ms is not None
        and e.predicted_ms
        <= budget_ms * (1.0 if e.method in INTERRUPTIBLE else UNINTERRUPTIBLE_SHARE)
    ]
    if fitting:
        best = min(fitting, key=lambda e: (e.predicted_ms, EXACT_METHODS.index(e.method)))
        reason = f"exact: {best.method} predicted {best.predicted_ms:.3g} ms within the budget"
        return Plan(best.method, reason, budget_ms, tuple(estimates), features, gpu)
    optimistic = milp_optimistic_ms(budget_ms, profile, features)
    milp_ms = next(e.predicted_ms for e in estimates if e.method == "milp")
    assert milp_ms is not None, "the MILP is predicted for every cart"
    if optimistic <= budget_ms:
        reason = (
            f"a proof may fit: the MILP takes {optimistic:.3g} ms on a quick cart of this size "
            f"(predicted {milp_ms:.3g} ms): GA warm start, then HiGHS to the budget"
        )
        warm = uncertain_warm_ms(budget_ms)
        return Plan("milp", reason, budget_ms, tuple(estimates), features, gpu, warm_start_ms=warm)
    ga = {e.method: e for e in estimates if not e.exact}
    method = "gpu-ga" if ga["gpu-ga"].predicted_ms is not None else "cpu-ga"
    share = PROOF_GA_SHARE if milp_ms <= PROOF_REACH * budget_ms else 1.0
    reason = (
        f"no exact method is predicted to finish in {budget_ms:.0f} ms: GA for "
        f"{share:.0%} of the budget, then the MILP on the time it leaves"
    )
    return Plan(method, reason, budget_ms, tuple(estimates), features, gpu, ga_share=share)


def _value(value: Any) -> Any:
    return value() if callable(value) else value


def solve_planned(
    problem: CartProblem,
    *,
    budget_ms: float | None = None,
    seed: int = 0,
    gpu_busy: bool | Callable[[], bool] = False,
    gpu_queue_depth: int | Callable[[], int] = 0,
    allow_gpu: bool = True,
    profile: RateProfile | None = None,
) -> Solution:
    """Plan, run the chosen method, and fall back (CPU GA last) if it cannot run here.

    The budget's clock starts after the CPU solvers are warm (once per process): loading or
    compiling numba code is the process's cost, not the shopper's budget (``plan["warmup_ms"]``
    says what the first request paid)."""
    from gpu_engine.device import gpu_available
    from gpu_engine.warmup import ensure_cpu_warm

    warmup_ms = ensure_cpu_warm() * 1e3
    started = time.perf_counter()
    budget = DEFAULT_BUDGET_MS if budget_ms is None else float(budget_ms)
    profile = profile or load_profile()
    gpu = GpuState(
        present=allow_gpu and gpu_available(),
        busy=bool(_value(gpu_busy)),
        queue_depth=int(_value(gpu_queue_depth)),
    )
    plan = make_plan(problem, budget_ms=budget, profile=profile, gpu=gpu)
    planning_ms = (time.perf_counter() - started) * 1e3
    fallback = None
    try:
        solution = _run(plan.method, problem, plan, started=started, seed=seed, profile=profile)
    except (CapacityError, MemoryError, RuntimeError) as exc:
        # A GPU that fails at run time, or memory the prediction did not foresee: the CPU GA
        # always runs, and the plan says what happened. A solver bug (SolverInconsistency) is
        # none of these and propagates.
        fallback = f"{plan.method} failed ({type(exc).__name__}: {exc}); cpu-ga ran instead"
        logger.warning("planner fallback: %s", fallback, exc_info=True)
        solution = _run("cpu-ga", problem, plan, started=started, seed=seed, profile=profile)
    solution.plan = {
        **plan.to_dict(),
        "algorithm": solution.algorithm,
        "planning_ms": planning_ms,
        "warmup_ms": warmup_ms,
        "solver_ms": solution.elapsed_ms,
        "fallback": fallback,
        # The MILP after a GA: attempted or skipped, and whether the deadline cut it.
        "proof_after_ga": solution.stats.get("proof_after_ga"),
    }
    solution.elapsed_ms = (time.perf_counter() - started) * 1e3
    return solution


def _remaining(started: float, budget_ms: float) -> float:
    return max(1.0, budget_ms - (time.perf_counter() - started) * 1e3)


def _run(method: str, problem, plan: Plan, *, started: float, seed: int, profile) -> Solution:
    from gpu_engine.solvers.ga.solve import solve_ga

    budget_ms, gpu = plan.budget_ms, plan.gpu
    if method == "cpu-full":
        from gpu_engine.solvers.full.cpu import solve_cpu_full

        return solve_cpu_full(problem, budget_ms=_remaining(started, budget_ms))
    if method == "gpu-full":
        from gpu_engine.solvers.full.cuda import solve_gpu_full

        return solve_gpu_full(problem, budget_ms=_remaining(started, budget_ms))
    if method in ("cpu-dp", "gpu-dp"):
        from gpu_engine.solvers.dp.solve import solve_dp

        return solve_dp(problem, device=method[:3])
    if method == "milp":
        warm_ms = plan.warm_start_ms or warm_start_ms(budget_ms)
        return _warm_milp(problem, started, budget_ms, seed, gpu, warm_ms)
    device = "gpu" if method == "gpu-ga" else "cpu"
    ga_ms = plan.ga_share * _remaining(started, budget_ms)
    solution = solve_ga(problem, budget_ms=ga_ms, seed=seed, device=device)
    return _prove(problem, solution, started, budget_ms, profile)


def _choice(problem: CartProblem, solution: Solution) -> np.ndarray:
    index = {merchant: m for m, merchant in enumerate(problem.merchant_ids)}
    return np.array([index[solution.assignment[item]] for item in problem.item_ids])


def _proof_floor_ms(problem: CartProblem, profile: RateProfile) -> float:
    pairs = int(problem.cand_count.sum())
    floor = PROOF_FLOOR_FACTOR * (profile.milp_overhead_ms + profile.milp_flat(pairs))
    return max(MIN_PROOF_MS, floor)


def _prove(problem, ga: Solution, started, budget_ms, profile: RateProfile) -> Solution:
    """Spend what the GA left of the budget on the MILP, warm-started with the GA's answer:
    a proven optimum (or a better incumbent) replaces the GA's answer; otherwise the GA's
    answer stands with the tighter of the two gaps. The MILP's time is a hard deadline (a
    proof still running at the end of the budget is cut: ``stats["proof_after_ga"]["cut"]``)."""
    from gpu_engine.solvers.milp.runner import solve_milp

    left = budget_ms - (time.perf_counter() - started) * 1e3
    floor = _proof_floor_ms(problem, profile)
    if ga.optimal or left < floor:
        reason = "the GA proved it" if ga.optimal else f"{left:.0f} ms left < {floor:.0f} ms floor"
        ga.stats["proof_after_ga"] = {"attempted": False, "reason": reason}
        return ga
    milp = solve_milp(problem, budget_ms=left, warm_start=_choice(problem, ga))
    summary = {
        "attempted": True,
        "left_ms": left,
        "total": milp.total,
        "optimal": milp.optimal,
        "gap": milp.gap,
        "elapsed_ms": milp.elapsed_ms,
        "build_ms": milp.stats["build_ms"],
        "highs_status": milp.stats["highs_status"],
        "cut": milp.stats["cut"],
    }
    if milp.optimal or milp.total < ga.total:
        milp.stats["warm_start_ga"] = {"total": ga.total, "elapsed_ms": ga.elapsed_ms}
        milp.stats["proof_after_ga"] = summary
        milp.elapsed_ms += ga.elapsed_ms
        return milp
    ga.stats["milp_after_ga"] = summary
    ga.stats["proof_after_ga"] = summary
    if milp.gap is not None and (ga.gap is None or milp.gap < ga.gap):
        ga.gap = milp.gap
    return ga


def _gpu_ga_fits(problem: CartProblem) -> bool:
    from gpu_engine.solvers.ga.cuda import MAX_LINES, MAX_MERCHANTS

    features = cart_features(problem)
    return features["lines"] <= MAX_LINES and features["merchants"] <= MAX_MERCHANTS


def _warm_milp(problem, started, budget_ms, seed, gpu: GpuState, ga_ms: float) -> Solution:
    """A short GA run (``ga_ms``) warm-starts HiGHS; the MILP gets the rest of the budget."""
    from gpu_engine.solvers.ga.solve import solve_ga
    from gpu_engine.solvers.milp.runner import solve_milp

    idle_gpu = gpu.present and not gpu.busy and gpu.queue_depth == 0
    device = "gpu" if idle_gpu and _gpu_ga_fits(problem) else "cpu"
    warm = solve_ga(problem, budget_ms=ga_ms, seed=seed, device=device)
    if warm.optimal:
        return warm
    solution = solve_milp(
        problem, budget_ms=_remaining(started, budget_ms), warm_start=_choice(problem, warm)
    )
    solution.stats["warm_start_ga"] = {"total": warm.total, "elapsed_ms": warm.elapsed_ms}
    return solution
