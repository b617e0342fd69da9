"""HiGHS on both formulations of the cart at once, each in its own solver process: the first
proof stops the other.

The extended program (:mod:`gpu_engine.solvers.milp.model`) proves most carts sooner; the
compact one (:mod:`gpu_engine.solvers.milp.compact`) proves some by seconds where the extended
one runs long (barely-free thresholds, one-cent ties: suite ``anytime``). Which one wins is
not predictable from the cart, so on long HiGHS windows (the planner's ``PORTFOLIO_MIN_MS``) both
run, on two cores. Each answer is re-priced exactly; the better assignment and the higher of the
two dual bounds make the outcome (a bound above an assignment both lanes priced means one lane's
bound is wrong: then the lower one stands).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import replace

import numpy as np

from gpu_engine.problem import CartProblem
from gpu_engine.solution import Solution
from gpu_engine.solvers.milp.compact import compact_build
from gpu_engine.solvers.milp.runner import (
    MilpOutcome,
    _cost,
    cents_bound,
    milp_answer,
    milp_proves,
    milp_run,
)

logger = logging.getLogger(__name__)

# The compact form's solver process.
COMPACT_LANE = 1


def portfolio_best(
    problem: CartProblem,
    *,
    budget_ms: float,
    warm_start: np.ndarray | None = None,
) -> tuple[Solution | None, MilpOutcome]:
    """:func:`~gpu_engine.solvers.milp.runner.milp_best` with both formulations side by side
    (a version 2 cart has one: see :func:`milp_portfolio`)."""
    started = time.perf_counter()
    outcome = milp_portfolio(problem, time_limit_ms=budget_ms, warm_start=warm_start)
    return milp_answer(problem, outcome, warm_start=warm_start, started=started), outcome


def milp_portfolio(
    problem: CartProblem,
    *,
    time_limit_ms: float,
    warm_start: np.ndarray | None = None,
    presolve: bool = True,
    heuristics: bool = True,
) -> MilpOutcome:
    """:func:`~gpu_engine.solvers.milp.runner.milp_run` on both formulations under one deadline
    (the warm start goes to the extended one, which can take it). The outcome's status is
    "Optimal" when either lane proved its answer. A version 2 cart (several nodes, weight
    tiers) has no compact form: its one program (:mod:`gpu_engine.solvers.milp.fulfilled`)
    runs alone, on the whole window."""
    if not problem.simple:
        return milp_run(
            problem,
            time_limit_ms=time_limit_ms,
            warm_start=warm_start,
            presolve=presolve,
            heuristics=heuristics,
        )
    stop = threading.Event()
    outcomes: dict[str, MilpOutcome] = {}

    def lane(name: str, **options) -> None:
        try:
            outcome = milp_run(problem, time_limit_ms=time_limit_ms, stop=stop, **options)
        except Exception:  # a lane that fails leaves the other to answer
            logger.exception("HiGHS's %s lane failed", name)
            return
        outcomes[name] = outcome
        if outcome.status == "Optimal":
            stop.set()

    compact = threading.Thread(
        target=lane,
        args=("compact",),
        kwargs={"model": compact_build(problem), "lane": COMPACT_LANE},
        name="milp-compact",
        daemon=True,
    )
    compact.start()
    lane("extended", warm_start=warm_start, presolve=presolve, heuristics=heuristics)
    compact.join()
    return _merged(problem, outcomes)


def _merged(problem: CartProblem, outcomes: dict[str, MilpOutcome]) -> MilpOutcome:
    extended = outcomes.get("extended")
    base = extended if extended is not None else outcomes.get("compact")
    if base is None:
        raise RuntimeError("both HiGHS lanes failed")
    priced = [
        (_cost(problem, o.choice), o.choice) for o in outcomes.values() if o.choice is not None
    ]
    total, choice = min(priced, key=lambda pair: pair[0], default=(None, None))
    bounds = [o.bound for o in outcomes.values() if not o.failed and math.isfinite(o.bound)]
    bound = max(bounds, default=-math.inf)
    if total is not None and bounds and total < (cents_bound(bound) or 0):
        logger.error("HiGHS's two formulations disagree: bounds %s above a priced answer", bounds)
        bound = min(bounds)
    proven = total is not None and milp_proves(total, bound)
    status = "Optimal" if proven else base.status
    cut = all(o.cut for o in outcomes.values())
    lanes = {name: o.status for name, o in outcomes.items()}
    logger.debug("portfolio lanes: %s", lanes)
    return replace(base, choice=choice, bound=bound, status=status, cut=cut)
