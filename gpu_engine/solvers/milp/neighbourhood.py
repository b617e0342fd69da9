"""Large-neighbourhood steps from an incumbent: HiGHS on the cart's program with most of it
fixed, guided by the program's LP relaxation.

The GA stalls where a cheaper cart needs many lines to move together (an optimum that opens one
more merchant for its free shipping, closes three and moves dozens of lines), where single-line
descent stops short and HiGHS on the whole cart is slow to find it. The LP relaxation, much
cheaper, points at the change: the merchants it rounds differently from the incumbent are those
the optimum opens and closes. Two neighbourhoods, each one HiGHS run on the same built program
with columns fixed:

* **configuration**: every merchant's open (``y``) and free-shipping (``f``) switch that the LP
  has within ``CONFIG_TOLERANCE`` of 0 or 1 is fixed there; every line stays free, and HiGHS
  solves that far faster than the whole cart;
* **lines** (RINS-like): only the lines the LP disagrees with are free (their incumbent pair
  below ``LINE_AGREEMENT``, or at a merchant the LP would open or close), plus the
  ``COMPENSATING_LINES`` lines of the threshold merchants those touch that are the cheapest to
  move among them (a merchant that loses a line can drop below its free-shipping threshold unless
  another line comes in). A free line may go to its incumbent, its LP support, a merchant the LP
  disagrees on or one of those threshold merchants. It helps where the configuration step
  fixes too much (``large_qty``).

Every step keeps the better of its answer and the incumbent, both priced by the pricing routine:
the result is never worse than the incumbent. Each step is HiGHS under the hard deadline of
:func:`gpu_engine.solvers.milp.runner.milp_run`, so the result depends on the machine's speed as
the GA's does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpu_engine import pricing
from gpu_engine.pricing import assignment_cost
from gpu_engine.problem import CartProblem
from gpu_engine.solvers.milp.model import BuildCancelled, MilpModel, milp_point
from gpu_engine.solvers.milp.runner import ColumnBounds, milp_run, program_build

# The configuration step fixes a merchant's switch where the LP is this close to 0 or 1.
CONFIG_TOLERANCE = 0.2
# A line (or merchant) agrees with the LP when the LP puts at least this much on its choice.
LINE_AGREEMENT = 0.99
# Lines of the touched threshold merchants the lines step frees as well.
COMPENSATING_LINES = 20
# An LP value above this is part of the LP's support.
_SUPPORT = 1e-6
# Below this many ms left a step is not started: HiGHS cannot even set up.
MIN_STEP_MS = 5.0
# The configuration step's share of the time the LP leaves: the lines step gets the rest (on
# large_qty the configuration step rarely finishes, and the lines step is the one that helps).
CONFIGURATION_SHARE = 0.8
# HiGHS's primal heuristics in the steps: off, which makes both faster. The configuration step's
# optimum comes from the root's LP and cuts, and the lines step has the incumbent.
STEP_HEURISTICS = False


@dataclass(frozen=True)
class LpGuide:
    """The cart's built program and its LP relaxation's optimum."""

    model: MilpModel
    values: np.ndarray  # every column's LP value
    bound: float  # the LP optimum: a lower bound on every total

    def merchant_open(self) -> np.ndarray:
        """The LP's ``y`` per merchant (0 where the merchant has no pair); on a version 2 cart
        per column, its node's ``open`` (a node that never charges has none: the largest ``x``
        of its pairs stands for it)."""
        out = np.zeros(self.model.problem.n_merchants)
        for m, cols in self.model.merchants.items():
            out[m] = self.values[cols.y]
        if self.model.fulfilled is not None:
            for owner in self.model.fulfilled.owners:
                for node in owner.nodes:
                    if node.open >= 0:
                        out[node.column] = self.values[node.open]
                    else:
                        out[node.column] = self.values[node.pairs].max(initial=0.0)
        return out

    def switches(self) -> list[int]:
        """The program's open and free-shipping switch columns (per merchant; on a version 2
        cart each node's ``open`` and each merchant's ``f``)."""
        cols = [
            col
            for merchant in self.model.merchants.values()
            for col in (merchant.y, merchant.f)
            if col >= 0
        ]
        if self.model.fulfilled is not None:
            for owner in self.model.fulfilled.owners:
                cols += [node.open for node in owner.nodes if node.open >= 0]
                if owner.cols.f >= 0:
                    cols.append(owner.cols.f)
        return cols


@dataclass
class LnsResult:
    """The best choice met (the incumbent if nothing beat it), its exact total, the LP bound
    (None when the LP did not finish) and one entry a step."""

    choice: np.ndarray
    total: int
    bound: float | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)


def total_of(problem: CartProblem, choice: np.ndarray) -> int:
    if not problem.simple:
        return pricing.total_of(problem, choice)
    return int(
        assignment_cost(
            np.asarray(choice, dtype=np.int64),
            problem.quantity,
            problem.price,
            *problem.merchant_params,
        )
    )


def lp_guide(problem: CartProblem, *, deadline: float) -> LpGuide | None:
    """Build the program and solve its LP relaxation before ``deadline`` (a
    ``time.perf_counter()`` value); None when either does not finish in time."""
    try:
        model = program_build(problem, cancelled=lambda: time.perf_counter() >= deadline)
    except BuildCancelled:
        return None
    left_ms = (deadline - time.perf_counter()) * 1e3
    if left_ms < MIN_STEP_MS:
        return None
    outcome = milp_run(problem, time_limit_ms=left_ms, relaxed=True, model=model)
    if outcome.values is None:
        return None
    return LpGuide(model=model, values=outcome.values, bound=outcome.bound)


def configuration_bounds(guide: LpGuide) -> ColumnBounds:
    """Each merchant's ``y`` and ``f`` (a version 2 cart: each node's ``open``, each merchant's
    ``f``) fixed where the LP has them near 0 or 1."""
    chosen = np.asarray(guide.switches(), dtype=np.int32)
    values = guide.values[chosen]
    rounded = np.round(values)
    near = np.abs(values - rounded) < CONFIG_TOLERANCE
    return ColumnBounds(chosen[near], rounded[near], rounded[near].copy())


def lines_bounds(guide: LpGuide, *, incumbent: np.ndarray) -> ColumnBounds:
    """Every pair column a line may not take in the lines step, dropped (upper bound 0)."""
    model, problem = guide.model, guide.model.problem
    free, disagree = _disagreement(guide, incumbent=incumbent)
    support = guide.values[: model.x_line.size] > _SUPPORT
    is_open = np.bincount(incumbent, minlength=problem.n_merchants) > 0
    touched = np.zeros(problem.n_merchants, dtype=bool)
    touched[model.x_merchant[support & free[model.x_line]]] = True
    touched[incumbent[free]] = True
    touched &= is_open & _has_threshold(problem)
    extra = _compensating_lines(problem, incumbent, free=free, touched=touched)
    pair_free = free[model.x_line]
    allowed = (
        (incumbent[model.x_line] == model.x_merchant)
        | (pair_free & (support | disagree[model.x_merchant]))
        | ((pair_free | extra[model.x_line]) & touched[model.x_merchant])
    )
    dropped = np.flatnonzero(~allowed).astype(np.int32)
    zeros = np.zeros(dropped.size)
    return ColumnBounds(dropped, zeros, zeros.copy())


def _disagreement(guide: LpGuide, *, incumbent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lines the LP disagrees with (less than ``LINE_AGREEMENT`` on their incumbent pair, or
    at a merchant it disagrees on) and the merchants it disagrees on (open in the incumbent with
    ``y`` below it, or closed with ``y`` above ``1 - LINE_AGREEMENT``)."""
    model, problem = guide.model, guide.model.problem
    x = guide.values[: model.x_line.size]
    at_incumbent = incumbent[model.x_line] == model.x_merchant
    agreement = np.zeros(problem.n_items)
    np.add.at(agreement, model.x_line[at_incumbent], x[at_incumbent])
    is_open = np.bincount(incumbent, minlength=problem.n_merchants) > 0
    y = guide.merchant_open()
    disagree = (is_open & (y < LINE_AGREEMENT)) | (~is_open & (y > 1.0 - LINE_AGREEMENT))
    return (agreement < LINE_AGREEMENT) | disagree[incumbent], disagree


def _has_threshold(problem: CartProblem) -> np.ndarray:
    """Per column: its merchant's free shipping switches a fee of this column off."""
    charges = (problem.base_fee > 0) | (problem.per_extra_unit > 0)
    if not problem.simple:
        f = problem.fulfillment
        charges = charges | (f.tier_fee.max(axis=1) > 0) | (f.per_kg_over > 0)
    return (problem.free_over >= 0) & charges


def _compensating_lines(
    problem: CartProblem, incumbent: np.ndarray, *, free: np.ndarray, touched: np.ndarray
) -> np.ndarray:
    """The ``COMPENSATING_LINES`` lines at touched merchants (not free already) whose cheapest
    offer at another touched merchant is the smallest rise over their price now."""
    out = np.zeros(problem.n_items, dtype=bool)
    lines = np.flatnonzero(touched[incumbent] & ~free)
    if lines.size == 0 or int(touched.sum()) < 2:
        return out
    merchants = np.flatnonzero(touched)
    prices = problem.price[np.ix_(lines, merchants)].astype(np.float64)
    prices[prices < 0] = np.inf
    prices[merchants[None, :] == incumbent[lines, None]] = np.inf
    own = problem.price[lines, incumbent[lines]].astype(np.float64)
    rise = (prices.min(axis=1) - own) / np.maximum(own, 1.0)
    order = np.argsort(rise, kind="stable")[:COMPENSATING_LINES]
    out[lines[order[np.isfinite(rise[order])]]] = True
    return out


def lines_step(problem: CartProblem, guide: LpGuide, result: LnsResult, *, left_ms: float) -> None:
    """The lines step alone from ``result``'s choice (which it replaces where cheaper): for a
    caller that has the LP already and no time for the configuration step."""
    bounds = lines_bounds(guide, incumbent=result.choice)
    _step(problem, guide, result, name="lines", bounds=bounds, left_ms=left_ms)


def _respects(guide: LpGuide, choice: np.ndarray, bounds: ColumnBounds) -> bool:
    """``choice`` is a feasible point of the program with ``bounds`` applied."""
    point = milp_point(guide.model, choice)[bounds.cols]
    return bool(np.all((point >= bounds.lower - 1e-9) & (point <= bounds.upper + 1e-9)))


def improve(problem: CartProblem, incumbent: np.ndarray, *, budget_ms: float) -> LnsResult:
    """The LP, then the configuration and lines steps on what is left of ``budget_ms`` (each
    from the best choice so far). Never returns a total above the incumbent's. On a version 2
    cart the incumbent is a column index per line, and the steps fix nodes' switches
    (:meth:`LpGuide.switches`)."""
    started = time.perf_counter()
    deadline = started + budget_ms / 1e3
    best = np.asarray(incumbent, dtype=np.int64)
    result = LnsResult(choice=best, total=total_of(problem, best))
    guide = lp_guide(problem, deadline=deadline)
    result.steps.append({"step": "lp", "ms": _ms_since(started), "done": guide is not None})
    if guide is None:
        return result
    result.bound = guide.bound
    for name, share in (("configuration", CONFIGURATION_SHARE), ("lines", 1.0)):
        left_ms = (deadline - time.perf_counter()) * 1e3 * share
        if left_ms < MIN_STEP_MS or result.total <= guide.bound:
            break
        bounds = (
            configuration_bounds(guide)
            if name == "configuration"
            else lines_bounds(guide, incumbent=result.choice)
        )
        _step(problem, guide, result, name=name, bounds=bounds, left_ms=left_ms)
    return result


def _step(
    problem: CartProblem,
    guide: LpGuide,
    result: LnsResult,
    *,
    name: str,
    bounds: ColumnBounds,
    left_ms: float,
) -> None:
    """One HiGHS run in a neighbourhood; ``result`` takes its answer where it is cheaper."""
    t0 = time.perf_counter()
    warm = result.choice if _respects(guide, result.choice, bounds) else None
    outcome = milp_run(
        problem,
        time_limit_ms=left_ms,
        warm_start=warm,
        model=guide.model,
        bounds=bounds,
        heuristics=STEP_HEURISTICS,
    )
    total = None if outcome.choice is None else total_of(problem, outcome.choice)
    if total is not None and outcome.choice is not None and total < result.total:
        result.choice, result.total = outcome.choice.astype(np.int64), total
    result.steps.append(
        {
            "step": name,
            "ms": _ms_since(t0),
            "fixed": int(bounds.cols.size),
            "total": total,
            "status": outcome.status,
            "cut": outcome.cut,
        }
    )


def _ms_since(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1e3, 3)
