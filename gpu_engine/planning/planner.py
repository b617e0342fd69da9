"""The planner: which solver answers ``gpu_engine.solve(problem, budget_ms=...)``.

Jet.com picked between full search and a GPU genetic algorithm with a learned decision function.
Here every solver's time is *predicted* from the cart's features (lines, offers, complexity,
subset-DP step counts, (line, merchant) pairs, whether merchants have threshold or discount
switches) and the machine's measured rates (:mod:`gpu_engine.planning.profile`), and the rule is
plain:

* a full search or subset DP runs whenever one is predicted to finish within the budget, the
  fastest of them. Methods that cannot stop early (the DPs) must fit within
  ``UNINTERRUPTIBLE_SHARE`` of the budget; the others are handed the remaining budget;
* otherwise the answer is *anytime*: a GA phase and a HiGHS phase, in the order the measured
  rates say, every phase keeping the best assignment found so far, and the best of all of them
  returned:

  - **HiGHS first** (``method == "milp"``) when the profile predicts HiGHS proves the cart in
    the time the GA phase leaves (typically flat carts: fixed delivery fees, no discounts or
    thresholds). HiGHS, warm-started with the GA's drop-heuristic seed, gets that time as a hard
    deadline; if it has not proven its answer, the GA runs on the rest, bounded by HiGHS's dual
    bound. The GA's time here stops growing at ``HIGHS_FIRST_GA_UNTIL_MS`` of budget: on long
    budgets HiGHS's one run gets nearly all of it (a second run would start its search afresh);
  - **GA first** (``cpu-ga``/``gpu-ga``) otherwise: the GA phase (it stops early when it stalls
    or meets a proven bound), then HiGHS, warm-started with the GA's answer, on all the time
    left (without its presolve and primal heuristics: ``PROOF_PRESOLVE``, ``PROOF_HEURISTICS``
    in :mod:`gpu_engine.solvers.milp.runner`): its dual bound after the root LP is at least the
    LP relaxation's, and its cuts and reduced-cost fixing against the GA's total close most of
    the rest, so a separate LP solve first would only take time from it (on issue 13's
    families the LP alone took 7-45% of the CPU time of HiGHS's whole proof and proved none of
    32 carts). Below HiGHS's floor (its presolve alone can outlast a few ms) the LP
    relaxation's bound (:mod:`gpu_engine.bounds.lp`) runs instead, on what is left: it proves
    the GA's answer when it meets it to the cent, or tightens its gap.

    Between the GA and HiGHS's proof, a large-neighbourhood step (``lns``,
    :mod:`gpu_engine.solvers.milp.neighbourhood`) gets :func:`lns_phase_ms` of the budget on
    carts of ``LNS_MIN_LINES`` lines or more: the LP relaxation, then HiGHS on the cart with the
    merchants' switches the LP settles fixed, then with only the lines the LP disagrees with
    free. The GA stalls where the optimum opens and closes merchants together (split_punish's
    200-line cart 0: 0.107% above it on the H100 at 200 ms); this step found that optimum in ~100
    ms of one core here. Its answer (never worse than the GA's) is HiGHS's warm start, and its
    LP bound proves an answer that meets it. Where the GA would take the whole budget, its time
    is cut to leave the step its share.

  Either route, unproven when its phases end (HiGHS at its deadline or its own limit, the GA
  stalled), goes on until the budget ends or a proof (:mod:`gpu_engine.planning.anytime`):
  HiGHS once more, warm-started with the best answer (HiGHS first only, where HiGHS did not
  fail), then the GA restarting from new seeds whenever it stalls. A HiGHS run whose status is
  neither a proof nor a limit ("Solve error", "Infeasible" on a cart that has an assignment, a
  crashed solver process) or that raises is a route that failed: its bound is not believed and
  the others answer on the rest of the budget. Beyond HiGHS's trusted range
  (``HIGHS_MAX_MONEY``) the GA with restarts runs until the budget ends.

  The GA phase's time is :func:`ga_phase_ms`: ``GA_SHARE`` of the budget, or the whole budget
  while what is left could not give HiGHS ``GA_FLOOR_FACTOR`` x its floor (or x its predicted
  time, where that is less). The GPU GA's share stops growing at ``GPU_GA_SHARE_UNTIL_MS`` of
  budget: it is at the optimum within that (on issue 13's families at 200 ms on the H100), and
  past it the time goes to HiGHS's proof after it.

Monotone in the budget, by construction: the GA's run is a pure function of the seed and the
generation count, and keeps its best (elitism); its time on either route is at least
:func:`ga_phase_ms` of the budget, which is nondecreasing in the budget, so a larger budget runs
the smaller budget's GA trajectory and more (as far as the machine's speed is steady), and the
answer is never worse than that GA's. The neighbourhood step, HiGHS and the GA's restarts only
ever replace an answer with a better one (the step's time, :func:`lns_phase_ms`, is
nondecreasing in the budget too).
(Where a full search or DP is predicted to fit it answers the optimum.) ``plan["ran"]`` lists
every phase that ran, with its time, total and why it ran or stopped; ``plan["order"]`` and
``plan["reason"]`` say why this route.

The GPU's state comes from the caller (the Celery side knows its queues): ``gpu_busy`` and
``gpu_queue_depth`` (values or callables) turn into a predicted wait of ``depth *
profile.gpu_job_ms`` added to every GPU method; ``allow_gpu=False`` keeps the solve off the GPU
(a CPU worker must not open a CUDA context in a forked process).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from gpu_engine.planning.anytime import (
    HIGHS_ERRORS,
    Rest,
    best_bound,
    choice_of,
    distrust,
    highs_failed,
    highs_proof,
    keep_going,
    phase_record,
    trusted_bound,
)
from gpu_engine.planning.profile import RateProfile, load_profile
from gpu_engine.problem import INT64_MAX, CapacityError, CartProblem
from gpu_engine.solution import Solution
from gpu_engine.solvers.milp.model import HIGHS_MAX_MONEY, highs_trusted, money_scale

logger = logging.getLogger(__name__)

DEFAULT_BUDGET_MS = 2000.0
# Share of the budget an uninterruptible exact method may be predicted to take.
UNINTERRUPTIBLE_SHARE = 0.8
# The GA's share of the budget on every anytime route (see the module docstring): HiGHS first
# leaves it at least this much, GA first gives it this much.
GA_SHARE = 0.5
# The GPU GA-first route's share of the budget grows only up to this budget (ms): the GPU GA was
# at the optimum on 42 of 43 issue-13 family carts at 200 ms (BENCHMARKS.md), and half of a 1000
# ms budget left HiGHS's proof after it ~480 ms, in which 15 of the 24 hardest carts are proven
# (warm-started with the optimum, CPU of this machine) against 19 in ~780 ms. Monotone still:
# the GA's time stays nondecreasing in the budget (flat between here and where it grows again).
GPU_GA_SHARE_UNTIL_MS = 400.0
# HiGHS first: the GA's time after it grows only up to this budget (ms), so that on long
# budgets HiGHS's one run gets nearly all of it (a second run starts its search afresh). On
# issue 25's barely-free and one-cent carts HiGHS took 5-11 s to prove, and stopped at ~45% of a
# 10 s budget; the GA after it stalls in 0.3-0.7 s there. Monotone still: nondecreasing, flat
# past it.
HIGHS_FIRST_GA_UNTIL_MS = 1000.0
# HiGHS is given time only beyond this many times its proof floor (``_proof_floor_ms``): below
# it the GA gets the whole budget, since HiGHS could not even set up in what is left.
GA_FLOOR_FACTOR = 2.0
# The LP bound after the GA (only where HiGHS's MILP is not started) needs this much time.
MIN_LP_MS = 5.0
# The GPU GA only when the predicted wait for the GPU leaves most of the budget.
GPU_GA_MAX_WAIT_SHARE = 0.25
# After the GA, the MILP runs only when at least this much of the budget is left (ms), and at
# least PROOF_FLOOR_FACTOR times the time HiGHS takes on a flat cart of the same size: below
# that its presolve alone can outlast the budget (seen on the H200 host at a 200 ms budget).
MIN_PROOF_MS = 20.0
PROOF_FLOOR_FACTOR = 2.0
# Beyond this many free lines the subset DPs are astronomically slow: not even estimated.
MAX_DP_FREE_LINES = 40
# The large-neighbourhood step after the GA (see the module docstring): LNS_SHARE of the budget,
# at most LNS_MAX_MS (at 200 ms 100 ms: the LP and the configuration step's ~45 ms on a 200-line
# split_punish cart need about that on one core here; past it the proof keeps the rest; on
# issue 13's families the CPU path's proofs at 1000 ms rose from 43 to 52 of 87 runs with it), on
# carts of LNS_MIN_LINES lines or more (smaller ones the GA solves) and at most LNS_MAX_PAIRS
# (line, merchant) pairs (the program's build is not free: ~5 ms at 1,300 pairs).
LNS_SHARE = 0.5
LNS_MAX_MS = 250.0
# On the GPU route the step runs beside the GPU GA, on the host (whose cores the GPU GA leaves
# idle), for at most the GA's time: cutting the GPU GA to 100 ms at a 200 ms budget to run the
# step after it lost more carts than the step won (H100, 04:21Z: at the optimum 41 of 44 at
# 200 ms against 42, proven at 1000 ms 35 of 44 against 37).
LNS_MIN_LINES = 30
LNS_MAX_PAIRS = 5000
# Below this many ms the LP and one neighbourhood cannot both run on a 30-line cart.
LNS_MIN_MS = 15.0
# The step ends this many ms before the budget does: a HiGHS run cut at its deadline winds down
# on its own thread for a few ms, and the answer is priced and built after it.
LNS_FINISH_MS = 5.0

# HiGHS first runs both of the cart's formulations side by side (two solver processes, a core
# each) when it has at least this long: the compact one proved barely-free and one-cent carts in
# ~6 s where the extended one ran past 10 s, and the extended one proves most others sooner
# (suite ``anytime``). Shorter windows keep to one core and the extended form.
PORTFOLIO_MIN_MS = 2000.0

EXACT_METHODS = ("cpu-full", "gpu-full", "cpu-dp", "gpu-dp", "flat", "milp")
INTERRUPTIBLE = frozenset({"cpu-full", "gpu-full", "flat", "milp"})


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
    # The GA's share of the budget on the anytime routes, and its time (``ga_phase_ms``).
    ga_share: float = GA_SHARE
    ga_ms: float = 0.0
    # The CPU GA's time (``ga_ms`` without the GPU GA's cap): a GPU GA that fails at run time
    # falls back to the CPU GA, which gets its own share.
    cpu_ga_ms: float = 0.0
    # The large-neighbourhood step's time: after the CPU GA (``lns_phase_ms``), or beside the
    # GPU GA; ``cpu_lns_ms`` is the step's time after a CPU GA on either route (a GPU GA that
    # fails at run time falls back to the CPU GA and the step after it).
    lns_ms: float = 0.0
    cpu_lns_ms: float = 0.0
    # "exact", "highs-first" or "ga-first".
    order: str = "exact"
    # The least time HiGHS is started with after a GA (``_proof_floor_ms``), computed once,
    # when planning.
    proof_floor_ms: float = MIN_PROOF_MS

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "reason": self.reason,
            "budget_ms": self.budget_ms,
            "ga_share": self.ga_share,
            "ga_ms": self.ga_ms,
            "cpu_ga_ms": self.cpu_ga_ms,
            "lns_ms": self.lns_ms,
            "cpu_lns_ms": self.cpu_lns_ms,
            "order": self.order,
            "proof_floor_ms": self.proof_floor_ms,
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
        # The largest amount one row of the MILP holds: HiGHS runs only while it is trusted.
        "money": money_scale(problem),
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


def _flat_estimate(problem: CartProblem, profile: RateProfile, features) -> Estimate:
    """The flat-cart solver (:mod:`gpu_engine.solvers.flat`): where every merchant is an opening
    cost plus per-line costs, facility location's dual ascent proves most carts at its root."""
    from gpu_engine.solvers.flat.data import is_flat

    if not is_flat(problem):
        return Estimate("flat", True, None, "a merchant's cost is not opening + per-line costs")
    ms = profile.flat_overhead_ms + profile.flat_ms_per_pair * features["pairs"]
    return Estimate("flat", True, ms, "facility location: dual ascent, then branch and bound")


def _milp_law(profile: RateProfile, features):
    return profile.milp_switched if features["switched"] else profile.milp_flat


def _milp_estimate(profile: RateProfile, features) -> Estimate:
    if not _highs_runs(features):
        return Estimate("milp", True, None, _HIGHS_UNTRUSTED)
    ms = profile.milp_overhead_ms + _milp_law(profile, features)(features["pairs"])
    return Estimate("milp", True, ms, "HiGHS alone, one thread")


_HIGHS_UNTRUSTED = f"amounts beyond HiGHS's exact range ({HIGHS_MAX_MONEY:.0e} cents a merchant)"


def _highs_runs(features: dict[str, Any]) -> bool:
    """HiGHS is exact on this cart (:func:`gpu_engine.solvers.milp.runner.highs_trusted`)."""
    return highs_trusted(features.get("money", 0.0))


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
    features: dict[str, Any] | None = None,
) -> Plan:
    """Predict every method and choose (see the module docstring). ``features``: the cart's
    :func:`cart_features` where the caller has them already (computed before the budget)."""
    features = cart_features(problem) if features is None else features
    estimates = [
        *_full_estimates(problem, profile, gpu, features),
        *_dp_estimates(problem, profile, gpu, features),
        _flat_estimate(problem, profile, features),
        _milp_estimate(profile, features),
        *_ga_estimates(problem, budget_ms, profile, gpu, features),
    ]
    # HiGHS's floor, or its predicted time where that is less (flat carts: HiGHS first from
    # about three times its prediction).
    milp_ms = next(e.predicted_ms for e in estimates if e.method == "milp")
    if milp_ms is None:  # HiGHS does not run (amounts beyond its exact range)
        milp_ms = math.inf
    floor_ms = _proof_floor_ms(features, profile)
    ga_ms = cpu_ga_ms = ga_phase_ms(budget_ms, min(floor_ms, milp_ms))
    fitting = [e for e in estimates if e.exact and _fits(e, budget_ms, ga_ms)]

    def plan(method: str, reason: str, *, ga_ms: float = 0.0, order: str = "exact") -> Plan:
        # Every route shares the cart, the budget and the predictions; only the method, the
        # reason and the anytime fields differ.
        return Plan(
            method,
            reason,
            budget_ms,
            tuple(estimates),
            features,
            gpu,
            ga_ms=ga_ms,
            cpu_ga_ms=cpu_ga_ms,
            order=order,
            proof_floor_ms=floor_ms,
        )

    if fitting:
        best = min(fitting, key=lambda e: (e.predicted_ms, EXACT_METHODS.index(e.method)))
        if best.method == "milp":
            until = HIGHS_FIRST_GA_UNTIL_MS
            highs_ga_ms = ga_phase_ms(budget_ms, min(floor_ms, milp_ms), share_until_ms=until)
            reason = (
                f"HiGHS first: predicted to prove in {best.predicted_ms:.3g} ms, within the "
                f"{budget_ms - ga_ms:.0f} ms the GA's share leaves; HiGHS until "
                f"{highs_ga_ms:.0f} ms are left, then if unproven the GA, HiGHS again and GA "
                "restarts until the budget ends"
            )
            return plan("milp", reason, ga_ms=highs_ga_ms, order="highs-first")
        reason = f"exact: {best.method} predicted {best.predicted_ms:.3g} ms within the budget"
        return plan(best.method, reason)
    ga = {e.method: e for e in estimates if not e.exact}
    method = "gpu-ga" if ga["gpu-ga"].predicted_ms is not None else "cpu-ga"
    if method == "gpu-ga":
        until = GPU_GA_SHARE_UNTIL_MS
        ga_ms = ga_phase_ms(budget_ms, min(floor_ms, milp_ms), share_until_ms=until)
    applies = lns_applies(features)
    lns_ms = lns_phase_ms(budget_ms) if applies else 0.0
    # After a CPU GA the step's time comes out of the GA's where the GA would take the whole
    # budget: both stay nondecreasing in the budget (a minimum of nondecreasing functions).
    # Beside a GPU GA it runs on the host's idle cores and takes none of the GA's time (the
    # CPU GA of a GPU failure at run time is cut as on the CPU route).
    cpu_ga_ms = min(cpu_ga_ms, budget_ms - lns_ms)
    when = "after it"
    if method == "gpu-ga":
        # Beside the GA it costs no budget: all of the GA's time, up to the step's cap.
        lns_ms = max(0.0, min(LNS_MAX_MS, ga_ms - LNS_FINISH_MS)) if applies else 0.0
        when = "beside it on the host"
    else:
        ga_ms = min(ga_ms, budget_ms - lns_ms)
    reason = (
        f"GA first: no exact method is predicted to finish in {budget_ms:.0f} ms (HiGHS "
        f"{milp_ms:.3g} ms): GA for {ga_ms:.0f} ms, the neighbourhood step {when} for up to "
        f"{lns_ms:.0f} ms, then HiGHS, warm-started with the best answer, on the time they leave "
        "(the LP bound where that is below HiGHS's floor)"
    )
    cpu_lns_ms = lns_phase_ms(budget_ms) if applies else 0.0
    chosen = plan(method, reason, ga_ms=ga_ms, order="ga-first")
    return replace(chosen, lns_ms=lns_ms, cpu_lns_ms=cpu_lns_ms)


def ga_phase_ms(budget_ms: float, floor_ms: float, *, share_until_ms: float = math.inf) -> float:
    """The GA's time on an anytime route: ``GA_SHARE`` of the budget (of at most
    ``share_until_ms`` of it), or all of it while the rest could not give HiGHS
    ``GA_FLOOR_FACTOR`` x its floor. Nondecreasing in the budget (the monotone property rests on
    it): the whole budget up to that point, then flat, then the share, then flat."""
    share = GA_SHARE * min(budget_ms, share_until_ms)
    return max(share, min(budget_ms, GA_FLOOR_FACTOR * floor_ms))


def lns_applies(features: dict[str, Any]) -> bool:
    """The cart is one the large-neighbourhood step runs on (see ``LNS_MIN_LINES``; HiGHS runs
    it, so only where HiGHS is exact)."""
    sized = features["lines"] >= LNS_MIN_LINES and features["pairs"] <= LNS_MAX_PAIRS
    return sized and _highs_runs(features)


def lns_phase_ms(budget_ms: float, *, cap_ms: float = LNS_MAX_MS) -> float:
    """The large-neighbourhood step's time after the GA: nondecreasing in the budget."""
    return min(cap_ms, LNS_SHARE * budget_ms)


def _fits(estimate: Estimate, budget_ms: float, ga_ms: float) -> bool:
    if estimate.predicted_ms is None:
        return False
    if estimate.method == "milp":
        return estimate.predicted_ms <= budget_ms - ga_ms
    share = 1.0 if estimate.method in INTERRUPTIBLE else UNINTERRUPTIBLE_SHARE
    return estimate.predicted_ms <= budget_ms * share


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

    The budget's clock starts after the solvers the plan can reach are warm (once per process,
    :func:`gpu_engine.warmup.warm_before_budget`: the GPU's kernels too where ``allow_gpu`` and
    a GPU is present): loading or compiling numba code is the process's cost, not the shopper's
    budget (``plan["warmup_ms"]`` says what the first request paid)."""
    from gpu_engine.device import gpu_available
    from gpu_engine.warmup import warm_before_budget

    warmup_ms = warm_before_budget("auto", allow_gpu=allow_gpu) * 1e3
    # What depends on the cart alone is computed once, before the budget's clock, like the
    # warm-up; the GPU's state and everything timed are read after it starts.
    features = cart_features(problem)
    profile = profile or load_profile()
    started = time.perf_counter()
    budget = DEFAULT_BUDGET_MS if budget_ms is None else float(budget_ms)
    gpu = GpuState(
        present=allow_gpu and gpu_available(),
        busy=bool(_value(gpu_busy)),
        queue_depth=int(_value(gpu_queue_depth)),
    )
    plan = make_plan(problem, budget_ms=budget, profile=profile, gpu=gpu, features=features)
    planning_ms = (time.perf_counter() - started) * 1e3
    fallback = None
    try:
        solution = _run(plan.method, problem, plan, started=started, seed=seed)
    except (CapacityError, MemoryError, RuntimeError) as exc:
        # A GPU that fails at run time, or memory the prediction did not foresee: the CPU GA
        # always runs, and the plan says what happened. A solver bug (SolverInconsistency) is
        # none of these and propagates.
        fallback = f"{plan.method} failed ({type(exc).__name__}: {exc}); cpu-ga ran instead"
        logger.warning("planner fallback: %s", fallback, exc_info=True)
        solution, fallback = _fallback_ga(problem, plan, started=started, seed=seed, why=fallback)
    solution.plan = {
        **plan.to_dict(),
        "algorithm": solution.algorithm,
        "planning_ms": planning_ms,
        "warmup_ms": warmup_ms,
        "solver_ms": solution.elapsed_ms,
        "fallback": fallback,
        # The MILP after a GA: attempted or skipped, and whether the deadline cut it.
        "proof_after_ga": solution.stats.get("proof_after_ga"),
        # Every phase that ran, in order (time, total, proven, why it ran or stopped).
        "ran": solution.stats.get("phases") or [phase_record(plan.method, solution)],
    }
    solution.elapsed_ms = (time.perf_counter() - started) * 1e3
    return solution


def _fallback_ga(
    problem: CartProblem, plan: Plan, *, started: float, seed: int, why: str
) -> tuple[Solution, str]:
    """The CPU GA route after a failed method; where that fails too (its neighbourhood step or
    proof runs HiGHS, which may be what failed), the CPU GA alone on what is left."""
    try:
        return _run("cpu-ga", problem, plan, started=started, seed=seed), why
    except (CapacityError, MemoryError, RuntimeError) as exc:
        why += f"; that failed too ({type(exc).__name__}: {exc}); the CPU GA alone ran"
        logger.warning("planner fallback: %s", why, exc_info=True)
        from gpu_engine.solvers.ga.solve import solve_ga

        left = _remaining(started, plan.budget_ms)
        return solve_ga(problem, budget_ms=left, seed=seed, device="cpu", restarts=True), why


def _remaining(started: float, budget_ms: float) -> float:
    return max(1.0, budget_ms - (time.perf_counter() - started) * 1e3)


def _run(method: str, problem, plan: Plan, *, started: float, seed: int) -> Solution:
    budget_ms = plan.budget_ms
    if method == "cpu-full":
        from gpu_engine.solvers.full.cpu import solve_cpu_full

        return solve_cpu_full(problem, budget_ms=_remaining(started, budget_ms))
    if method == "gpu-full":
        from gpu_engine.solvers.full.cuda import solve_gpu_full

        return solve_gpu_full(problem, budget_ms=_remaining(started, budget_ms))
    if method in ("cpu-dp", "gpu-dp"):
        from gpu_engine.solvers.dp.solve import solve_dp

        return solve_dp(problem, device=method[:3])
    if method == "flat":
        from gpu_engine.solvers.flat.solve import solve_flat_solution

        return solve_flat_solution(problem, budget_ms=_remaining(started, budget_ms))
    if method == "milp":
        return _highs_first(problem, plan, started, seed)
    return _ga_first(problem, plan, method, started, seed)


def _proof_floor_ms(features: dict[str, Any], profile: RateProfile) -> float:
    floor = PROOF_FLOOR_FACTOR * (profile.milp_overhead_ms + profile.milp_flat(features["pairs"]))
    return max(MIN_PROOF_MS, floor)


def _ga_device(plan: Plan, method: str) -> str:
    if method == "gpu-ga":
        return "gpu"
    if method == "cpu-ga":
        return "cpu"
    gpu = plan.gpu
    idle_gpu = gpu.present and not gpu.busy and gpu.queue_depth == 0
    return "gpu" if idle_gpu and _gpu_ga_fits(plan.features) else "cpu"


def _ga_first(problem, plan: Plan, method: str, started, seed) -> Solution:
    from gpu_engine.solvers.ga.solve import solve_ga

    # A share of the budget itself, not of what planning left: the GA's time is then a pure,
    # nondecreasing function of the budget (the monotone property rests on it).
    device = _ga_device(plan, method)
    ga_ms = plan.ga_ms if device == "gpu" else plan.cpu_ga_ms
    beside = _NeighbourhoodBeside(problem, plan) if device == "gpu" else None
    ga = solve_ga(problem, budget_ms=ga_ms, seed=seed, device=device)
    ga.stats["phases"] = [_ga_record(device, ga, ga_ms)]
    if beside is not None and beside.started:
        answer = _prove(problem, beside.merge(ga, started), started, plan)
    else:
        answer = _prove(problem, _neighbourhood(problem, ga, started, plan), started, plan)
    # HiGHS has had its run after the GA (or its floor did not fit): GA restarts on the rest.
    rest = _rest(problem, plan, started, seed, device, answer.stats["phases"], highs=False)
    rest.bound = trusted_bound(answer)
    return keep_going(answer, rest)


def _ga_record(device: str, ga: Solution, budget_ms: float, **extra: Any) -> dict[str, Any]:
    """The GA phase's entry of ``plan["ran"]``: with its budget and why it stopped."""
    budget = round(budget_ms, 3)
    return phase_record(f"{device}-ga", ga, budget_ms=budget, stop=ga.stats["stop"], **extra)


def _rest(problem, plan: Plan, started, seed, device, phases, *, highs: bool) -> Rest:
    """The rest of the budget after a route's phases (:mod:`gpu_engine.planning.anytime`)."""

    def left_ms() -> float:
        return plan.budget_ms - (time.perf_counter() - started) * 1e3

    return Rest(problem, left_ms, seed, device, phases, highs, plan.proof_floor_ms)


class _NeighbourhoodBeside:
    """The large-neighbourhood step in a thread beside the GPU GA, from the cheapest offer of
    every line (the configuration step needs no incumbent: the LP guides it, and the GA's
    answer cannot be waited for). HiGHS releases the GIL while it runs; the GA's host loop only
    launches kernels. The thread is not stopped early: HiGHS's own time limit ends it within
    ``budget_ms`` of its start (after a GA that proved its answer, or one that failed and gave
    way to the CPU GA, it runs out that time beside what follows)."""

    def __init__(self, problem: CartProblem, plan: Plan) -> None:
        self.problem, self.plan = problem, plan
        self.result: Any = None  # the step's LnsResult once it has finished
        self.budget_ms = plan.lns_ms
        self.started = _lns_unfit(plan, self.budget_ms) is None
        self.started_at = time.perf_counter()
        if self.started:
            self.thread = threading.Thread(target=self._run, name="lns-beside-gpu", daemon=True)
            self.thread.start()

    def _run(self) -> None:
        from gpu_engine.solvers.milp.neighbourhood import improve

        # Each line's eligible merchants come by ascending unit price.
        cheapest = self.problem.cand_merchant[:, 0].astype(np.int64)
        try:
            self.result = improve(self.problem, cheapest, budget_ms=self.budget_ms)
        except Exception:  # the GA's answer stands; never a traceback for the step's sake
            logger.exception("the neighbourhood step beside the GPU GA failed")

    def merge(self, ga: Solution, started: float) -> Solution:
        """The GA's answer, or the step's where cheaper (or proven by the step's LP bound)."""
        if ga.optimal:
            ga.stats["phases"].append({"phase": "lns", "skipped": "the GA proved it"})
            return ga
        # Until the step's own deadline (HiGHS winds down within a few ms of it), never past
        # the budget: a late step must not eat the proof's time.
        step_ends = self.started_at + (self.budget_ms + LNS_FINISH_MS) / 1e3
        budget_ends = started + self.plan.budget_ms / 1e3
        self.thread.join(timeout=max(0.0, min(step_ends, budget_ends) - time.perf_counter()))
        if self.result is None:
            ga.stats["phases"].append({"phase": "lns", "skipped": "no answer within the budget"})
            return ga
        return _with_lns(self.problem, ga, self.result, budget_ms=self.budget_ms, beside=True)


def _lns_skip(problem: CartProblem, ga: Solution, plan: Plan, ms: float) -> str | None:
    """Why the large-neighbourhood step does not run after this GA (None: it runs)."""
    if ga.optimal:
        return "the GA proved it"
    return _lns_unfit(plan, ms)


def _lns_unfit(plan: Plan, ms: float) -> str | None:
    """Why the step does not run on this cart with ``ms`` (None: it runs)."""
    if not _highs_runs(plan.features):
        return _HIGHS_UNTRUSTED  # the step runs HiGHS
    if not lns_applies(plan.features):
        return (
            f"only on carts of {LNS_MIN_LINES} lines or more and at most {LNS_MAX_PAIRS} "
            "pairs (smaller ones are the GA's ground, larger ones' build is too slow)"
        )
    if ms < LNS_MIN_MS:
        return f"{ms:.0f} ms left < {LNS_MIN_MS:.0f} ms"
    return None


def _neighbourhood(problem: CartProblem, ga: Solution, started: float, plan: Plan) -> Solution:
    """The large-neighbourhood step from the CPU GA's answer on ``plan.cpu_lns_ms`` (less where
    the budget has less left): its answer where cheaper (found by HiGHS: ``algorithm``
    "milp"), proven where it meets the LP's bound; the GA's otherwise."""
    from gpu_engine.solvers.milp.neighbourhood import improve

    phases = ga.stats["phases"]
    left = plan.budget_ms - (time.perf_counter() - started) * 1e3
    ms = min(plan.cpu_lns_ms, left - LNS_FINISH_MS)
    skip = _lns_skip(problem, ga, plan, ms)
    if skip is not None:
        phases.append({"phase": "lns", "skipped": skip})
        return ga
    result = improve(problem, choice_of(problem, ga), budget_ms=ms)
    return _with_lns(problem, ga, result, budget_ms=ms, beside=False)


def _with_lns(
    problem: CartProblem, ga: Solution, result: Any, *, budget_ms: float, beside: bool
) -> Solution:
    """The GA's answer with the neighbourhood step's ``result`` (an ``LnsResult``): the step's
    choice where cheaper (found by HiGHS: ``algorithm`` "milp"), proven where it meets the
    bound (the LP's, or the GA's own)."""
    from gpu_engine.results import make_solution
    from gpu_engine.solvers.milp.runner import milp_proves

    phases = ga.stats["phases"]
    best_total = min(result.total, ga.total)
    bound = max(result.bound or 0.0, float(ga.stats.get("lower_bound") or 0))
    proven = milp_proves(best_total, bound)
    phases.append(
        {
            "phase": "lns",
            "ms": round(sum(step["ms"] for step in result.steps), 3),
            "total": result.total,
            "optimal": proven,
            "budget_ms": round(budget_ms, 3),
            "beside_gpu_ga": beside,
            "bound": result.bound,
            "steps": result.steps,
        }
    )
    improved = result.total < ga.total
    choice = result.choice if improved else choice_of(problem, ga)
    gap = None if proven or best_total == 0 else max(0.0, (best_total - bound) / best_total)
    # Beside the GA the step's time overlaps the GA's: it adds none.
    spent = 0.0 if beside else phases[-1]["ms"]
    return make_solution(
        problem,
        choice,
        total=best_total,
        optimal=proven,
        algorithm="milp" if improved else ga.algorithm,
        device="cpu" if improved else ga.device,
        elapsed_ms=ga.elapsed_ms + spent,
        gap=gap,
        stats={**ga.stats, "lns": {"ga_total": ga.total}, "lp_bound": result.bound},
    )


def _lp_after_ga(problem, ga: Solution, left_ms: float) -> None:
    """The LP relaxation's bound on the ``left_ms`` that HiGHS's MILP is not started with: a GA
    answer that meets it is proven here, otherwise its gap tightens (``ga`` is updated in
    place)."""
    from gpu_engine.bounds.lp import lp_bound

    phases = ga.stats["phases"]
    if ga.stats.get("lp_bound") is not None:
        phases.append({"phase": "lp-bound", "skipped": "the neighbourhood step solved the LP"})
        return
    if left_ms < MIN_LP_MS:
        phases.append({"phase": "lp-bound", "skipped": f"{left_ms:.0f} ms left: no time"})
        return
    lp = lp_bound(problem, time_limit_ms=left_ms)
    phases.append(
        {"phase": "lp-bound", "ms": round(lp.ms, 3), "bound": lp.bound, "status": lp.status}
    )
    if lp.bound is None:
        return
    ga.stats["lp_bound"] = lp.bound
    if ga.total <= lp.bound:
        ga.optimal, ga.gap = True, None
    elif ga.total > 0:
        gap = max(0.0, (ga.total - lp.bound) / ga.total)
        ga.gap = gap if ga.gap is None else min(ga.gap, gap)


def _prove(problem, ga: Solution, started, plan: Plan) -> Solution:
    """Spend what the GA left of the budget on proving its answer: HiGHS's MILP, warm-started
    with it, on all of that time (a proven optimum, or a better incumbent, replaces the GA's
    answer; otherwise the GA's answer stands with the tighter gap), or the LP bound where the
    time is below HiGHS's floor. Both run under a hard deadline (a proof still running at the
    end of the budget is cut: ``stats["proof_after_ga"]["cut"]``)."""
    phases = ga.stats.setdefault("phases", [phase_record("ga", ga)])
    left = plan.budget_ms - (time.perf_counter() - started) * 1e3
    floor = plan.proof_floor_ms
    if not ga.optimal and not _highs_runs(plan.features):
        ga.stats["proof_after_ga"] = {"attempted": False, "reason": _HIGHS_UNTRUSTED}
        phases.append({"phase": "milp", "skipped": _HIGHS_UNTRUSTED})
        return ga
    if ga.optimal or left < floor:
        if ga.optimal:
            reason = "the neighbourhood step proved it" if "lns" in ga.stats else "the GA proved it"
        else:
            reason = f"{left:.0f} ms left < {floor:.0f} ms floor"
            _lp_after_ga(problem, ga, left)
            if ga.optimal:
                reason += "; the LP bound proved it"
        ga.stats["proof_after_ga"] = {"attempted": False, "reason": reason}
        phases.append({"phase": "milp", "skipped": reason})
        return ga
    phases.append(
        {
            "phase": "lp-bound",
            "skipped": "HiGHS's MILP gets all the time left: its root bound is at least the LP's",
        }
    )
    milp, record = highs_proof(problem, ga, left)
    phases.append(record)
    if milp is None:
        ga.stats["proof_after_ga"] = {"attempted": True, "left_ms": left, "error": record["error"]}
        return ga
    summary = {
        "attempted": True,
        "left_ms": left,
        "total": milp.total,
        "optimal": milp.optimal,
        "gap": milp.gap,
        "elapsed_ms": milp.elapsed_ms,
        "build_ms": milp.stats["build_ms"],
        "highs_status": record["status"],
        "cut": milp.stats["cut"],
        "failed": record["failed"],
    }
    if milp.optimal or milp.total < ga.total:
        milp.stats["warm_start_ga"] = {"total": ga.total, "elapsed_ms": ga.elapsed_ms}
        milp.stats["proof_after_ga"] = summary
        milp.stats["phases"] = phases
        milp.elapsed_ms += ga.elapsed_ms
        return milp
    ga.stats["milp_after_ga"] = summary
    ga.stats["proof_after_ga"] = summary
    ga.stats["proof_bound"] = trusted_bound(milp)
    if milp.gap is not None and (ga.gap is None or milp.gap < ga.gap):
        ga.gap = milp.gap
    return ga


def _gpu_ga_fits(features: dict[str, Any]) -> bool:
    from gpu_engine.solvers.ga.cuda import MAX_LINES, MAX_MERCHANTS

    return features["lines"] <= MAX_LINES and features["merchants"] <= MAX_MERCHANTS


def _highs_first(problem, plan: Plan, started, seed) -> Solution:
    """HiGHS, warm-started with the drop heuristic's answer, until the GA's time (``ga_ms``) is
    all that is left of the budget. Unproven (its deadline, its own limit) or failed, the GA
    runs on the rest, bounded by HiGHS's dual bound where HiGHS did not fail, and then
    :func:`~gpu_engine.planning.anytime.keep_going` spends what is left: HiGHS once more,
    warm-started with the best answer (unless it failed), then GA restarts."""
    from gpu_engine.solvers.ga.solve import solve_ga

    highs_ms = _remaining(started, plan.budget_ms) - plan.ga_ms
    milp, bound, failed, record = _highs_run(problem, highs_ms)
    phases = [record]
    if milp is not None and milp.optimal:
        milp.stats["phases"] = phases
        return milp
    device = _ga_device(plan, "auto")
    ga_ms = _remaining(started, plan.budget_ms)
    ga = solve_ga(problem, budget_ms=ga_ms, seed=seed, device=device, bound=bound)
    phases.append(_ga_record(device, ga, ga_ms, bound=bound))
    best = ga if milp is None or ga.total <= milp.total else milp
    if milp is not None and best is ga:
        ga.elapsed_ms += milp.elapsed_ms
    rest = _rest(problem, plan, started, seed, device, phases, highs=not failed)
    rest.bound = best_bound(bound, ga.stats["lower_bound"])
    return keep_going(best, rest)


def _highs_run(problem, highs_ms: float) -> tuple[Solution | None, int | None, bool, dict]:
    """HiGHS first: (its answer or None, its bound in cents where it did not fail, whether it
    failed, its entry of ``plan["ran"]``). A failure (a status neither a proof nor a limit, or
    an error raised) leaves the answer's assignment but never its bound or proof."""
    from gpu_engine.solvers.ga.core import drop_seed
    from gpu_engine.solvers.milp.portfolio import portfolio_best
    from gpu_engine.solvers.milp.runner import cents_bound, milp_best

    budget = round(highs_ms, 3)
    try:
        best = portfolio_best if highs_ms >= PORTFOLIO_MIN_MS else milp_best
        milp, outcome = best(problem, budget_ms=max(1.0, highs_ms), warm_start=drop_seed(problem))
    except HIGHS_ERRORS as exc:
        error = f"{type(exc).__name__}: {exc}"
        logger.warning("HiGHS first failed: %s", error)
        return (
            None,
            None,
            True,
            {"phase": "milp", "budget_ms": budget, "failed": True, "error": error},
        )
    failed = highs_failed(outcome.status)
    if failed and milp is not None:
        distrust(problem, milp)
    extra = {"budget_ms": budget, "status": outcome.status, "cut": outcome.cut, "failed": failed}
    record = phase_record("milp", milp, **extra)
    return milp, None if failed else cents_bound(outcome.bound), failed, record
