"""The plan: which routes answer a cart within a budget, in which order, with which time. A pure
function of the problem, the budget, the rate profile and the GPU's state (:func:`make_plan`).

* An exact method (full search, subset DP, the flat solver) runs when one is predicted to fit:
  the fastest; one that cannot stop early must fit ``UNINTERRUPTIBLE_SHARE`` of the budget.
* Otherwise an anytime route: **HiGHS first** (``method == "milp"``) when HiGHS is predicted to
  prove the cart in what the GA's share leaves, else **GA first** (``cpu-ga``/``gpu-ga``): the
  GA, the large-neighbourhood step (after a CPU GA, beside a GPU GA) and HiGHS's proof.

The GA's time on either route is nondecreasing in the budget (:func:`ga_phase_ms`), and so is
the step's (:func:`lns_phase_ms`): a larger budget runs the smaller one's GA and more, which is
what makes the answers monotone in the budget."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from gpu_engine.planning import tuning
from gpu_engine.planning.estimates import (
    Estimate,
    GpuState,
    cart_features,
    estimate_all,
    highs_runs,
    proof_floor_ms,
)
from gpu_engine.planning.profile import RateProfile
from gpu_engine.problem import CartProblem

EXACT_METHODS = ("cpu-full", "gpu-full", "cpu-dp", "gpu-dp", "flat", "milp")
INTERRUPTIBLE = frozenset({"cpu-full", "gpu-full", "flat", "milp"})


@dataclass(frozen=True)
class BudgetSplit:
    """How an anytime route divides its budget (ms). ``ga_ms``: the chosen GA's time;
    ``cpu_ga_ms``: the CPU GA's (a GPU GA that fails at run time falls back to it); ``lns_ms``:
    the neighbourhood step's, after the CPU GA or beside the GPU GA; ``cpu_lns_ms``: the step's
    after a CPU GA on either route."""

    ga_ms: float = 0.0
    cpu_ga_ms: float = 0.0
    lns_ms: float = 0.0
    cpu_lns_ms: float = 0.0


@dataclass(frozen=True)
class Plan:
    """The chosen ``method`` and why; ``order``: "exact" (the method alone), "highs-first" or
    "ga-first"; ``split``: the anytime routes' times; ``proof_floor_ms``: the least time HiGHS
    is started with after a GA."""

    method: str
    reason: str
    budget_ms: float
    estimates: tuple[Estimate, ...]
    features: dict[str, Any]
    gpu: GpuState
    ga_share: float = tuning.GA_SHARE
    split: BudgetSplit = field(default_factory=BudgetSplit)
    order: str = "exact"
    proof_floor_ms: float = tuning.MIN_PROOF_MS

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "reason": self.reason,
            "budget_ms": self.budget_ms,
            "ga_share": self.ga_share,
            **asdict(self.split),
            "order": self.order,
            "proof_floor_ms": self.proof_floor_ms,
            "predicted_ms": {e.method: e.predicted_ms for e in self.estimates},
            "notes": {e.method: e.note for e in self.estimates if e.note},
            "features": self.features,
            "gpu": asdict(self.gpu),
        }


def make_plan(
    problem: CartProblem,
    *,
    budget_ms: float,
    profile: RateProfile,
    gpu: GpuState,
    features: dict[str, Any] | None = None,
) -> Plan:
    """Predict every method and choose (see the module docstring). ``features``: the cart's
    :func:`~gpu_engine.planning.estimates.cart_features` where the caller has them already."""
    features = cart_features(problem) if features is None else features
    estimates = estimate_all(problem, budget_ms, profile, gpu, features)
    # HiGHS's floor, or its predicted time where that is less (flat carts: HiGHS first from
    # about three times its prediction).
    milp_ms = next(e.predicted_ms for e in estimates if e.method == "milp")
    if milp_ms is None:  # HiGHS does not run (amounts beyond its exact range)
        milp_ms = math.inf
    floor_ms = proof_floor_ms(features, profile)
    ga_ms = cpu_ga_ms = ga_phase_ms(budget_ms, min(floor_ms, milp_ms))
    fitting = [e for e in estimates if e.exact and _fits(e, budget_ms, ga_ms)]

    def plan(method: str, reason: str, split: BudgetSplit, order: str = "exact") -> Plan:
        # Every route shares the cart, the budget and the predictions.
        shared = (budget_ms, tuple(estimates), features, gpu)
        return Plan(method, reason, *shared, split=split, order=order, proof_floor_ms=floor_ms)

    if fitting:
        best = min(fitting, key=lambda e: (e.predicted_ms, EXACT_METHODS.index(e.method)))
        if best.method == "milp":
            until = tuning.HIGHS_FIRST_GA_UNTIL_MS
            highs_ga_ms = ga_phase_ms(budget_ms, min(floor_ms, milp_ms), share_until_ms=until)
            reason = (
                f"HiGHS first: predicted to prove in {best.predicted_ms:.3g} ms, within the "
                f"{budget_ms - ga_ms:.0f} ms the GA's share leaves; HiGHS until "
                f"{highs_ga_ms:.0f} ms are left, then if unproven the GA, HiGHS again and GA "
                "restarts until the budget ends"
            )
            split = BudgetSplit(ga_ms=highs_ga_ms, cpu_ga_ms=cpu_ga_ms)
            return plan("milp", reason, split, "highs-first")
        reason = f"exact: {best.method} predicted {best.predicted_ms:.3g} ms within the budget"
        return plan(best.method, reason, BudgetSplit(ga_ms=0.0, cpu_ga_ms=cpu_ga_ms))
    ga = {e.method: e for e in estimates if not e.exact}
    method = "gpu-ga" if ga["gpu-ga"].predicted_ms is not None else "cpu-ga"
    if method == "gpu-ga":
        until = tuning.GPU_GA_SHARE_UNTIL_MS
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
        lns_ms = max(0.0, min(tuning.LNS_MAX_MS, ga_ms - tuning.LNS_FINISH_MS)) if applies else 0.0
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
    split = BudgetSplit(ga_ms=ga_ms, cpu_ga_ms=cpu_ga_ms, lns_ms=lns_ms, cpu_lns_ms=cpu_lns_ms)
    return plan(method, reason, split, "ga-first")


def ga_phase_ms(budget_ms: float, floor_ms: float, *, share_until_ms: float = math.inf) -> float:
    """The GA's time on an anytime route: ``GA_SHARE`` of the budget (of at most
    ``share_until_ms`` of it), or all of it while the rest could not give HiGHS
    ``GA_FLOOR_FACTOR`` x its floor. Nondecreasing in the budget (the monotone property rests on
    it): the whole budget up to that point, then flat, then the share, then flat."""
    share = tuning.GA_SHARE * min(budget_ms, share_until_ms)
    return max(share, min(budget_ms, tuning.GA_FLOOR_FACTOR * floor_ms))


def lns_applies(features: dict[str, Any]) -> bool:
    """The cart is one the large-neighbourhood step runs on (sized by ``LNS_MIN_LINES`` and
    ``LNS_MAX_PAIRS``; HiGHS runs it, so only where HiGHS is exact)."""
    lines, pairs = features["lines"], features["pairs"]
    sized = lines >= tuning.LNS_MIN_LINES and pairs <= tuning.LNS_MAX_PAIRS
    return sized and highs_runs(features)


def lns_phase_ms(budget_ms: float, *, cap_ms: float | None = None) -> float:
    """The large-neighbourhood step's time after the GA: nondecreasing in the budget."""
    cap = tuning.LNS_MAX_MS if cap_ms is None else cap_ms
    return min(cap, tuning.LNS_SHARE * budget_ms)


def _fits(estimate: Estimate, budget_ms: float, ga_ms: float) -> bool:
    if estimate.predicted_ms is None:
        return False
    if estimate.method == "milp":
        return estimate.predicted_ms <= budget_ms - ga_ms
    share = 1.0 if estimate.method in INTERRUPTIBLE else tuning.UNINTERRUPTIBLE_SHARE
    return estimate.predicted_ms <= budget_ms * share
