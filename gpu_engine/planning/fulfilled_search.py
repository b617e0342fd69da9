"""The anytime search of a version 2 cart that no exact method fits: the GA for an incumbent,
the LP relaxation, a lines neighbourhood step from the incumbent, then HiGHS's whole program
warm-started with the best so far.

On a version 2 cart the GA stalls where the optimum moves lines between the nodes of one
merchant while other lines change merchant (a parcel's weight tier, a node that can close):
measured on ``v2_uniform_cart(150, 5, 20, 9000)``, the GA's answer differed from the optimum on
12 lines, 9 of them node moves. The lines step (:mod:`gpu_engine.solvers.milp.neighbourhood`)
frees exactly the lines the LP disagrees with and finds such moves in a few tens of ms, where
HiGHS on the whole program needed over half a second. The LP needs no incumbent: beside a GPU
GA (or a CPU GA on a host with cores to spare) it runs in a thread, HiGHS in its own process.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any

from gpu_engine.planning.clock import Deadline, now
from gpu_engine.problem import CartProblem
from gpu_engine.solution import Solution

logger = logging.getLogger(__name__)

# The GA's share of the budget.
GA_SHARE = 0.3
# The LP must finish by this share of the budget (from the start), or the search goes on
# without it (HiGHS's whole program builds its own).
LP_ENDS_SHARE = 0.55
# The lines step's share of what the budget has left after the LP; HiGHS gets the rest.
LINES_SHARE = 0.6
# A CPU GA leaves the LP a core of its own from this many cores on.
LP_BESIDE_CPU_CORES = 8
# Below this the lines step is not started.
MIN_LINES_MS = 10.0


Phases = list[dict[str, Any]]


def phase(method: str, solution: Solution | None, **extra: Any) -> dict[str, Any]:
    """A phase's entry in the plan's ``ran`` list."""
    if solution is None:
        return {"method": method, "total": None, "proven": False, **extra}
    return {
        "method": method,
        "total": solution.total,
        "proven": solution.optimal,
        "ms": round(solution.elapsed_ms, 3),
        **extra,
    }


class _LpBeside:
    """The LP relaxation in a thread, started at once (it needs no incumbent)."""

    def __init__(self, problem: CartProblem, ends: float) -> None:
        self.guide: Any = None
        self.ends = ends
        self.thread = threading.Thread(
            target=self._run, args=(problem,), name="v2-lp-beside-ga", daemon=True
        )
        self.thread.start()

    def _run(self, problem: CartProblem) -> None:
        from gpu_engine.solvers.milp.neighbourhood import lp_guide

        try:
            self.guide = lp_guide(problem, deadline=self.ends)
        except Exception:  # the search goes on without the LP; never a traceback for it
            logger.exception("the LP beside the version 2 GA failed")

    def join(self) -> Any:
        self.thread.join(timeout=max(0.0, self.ends - now()) + 0.005)
        return self.guide if not self.thread.is_alive() else None


def ga_lp_highs(
    problem: CartProblem, deadline: Deadline, seed: int, device: str
) -> tuple[Solution, list[dict[str, Any]]]:
    """The best answer of the search within ``deadline`` and the phases it ran."""
    from gpu_engine.solvers.ga.solve import solve_ga
    from gpu_engine.solvers.milp.model import highs_trusted

    phases: Phases = []
    lp_ends = deadline.started + LP_ENDS_SHARE * deadline.budget_ms / 1e3
    trusted = highs_trusted(problem)
    spare_core = device == "gpu" or (os.cpu_count() or 1) >= LP_BESIDE_CPU_CORES
    beside = _LpBeside(problem, lp_ends) if trusted and spare_core else None
    ga = solve_ga(problem, budget_ms=GA_SHARE * deadline.budget_ms, seed=seed, device=device)
    phases.append(phase(f"{device}-ga", ga))
    if ga.optimal:
        return ga, phases
    if not trusted:
        return _ga_alone(problem, ga, deadline, seed, device, phases), phases
    guide = beside.join() if beside is not None else _lp_now(problem, lp_ends)
    best = ga
    if guide is not None:
        phases.append({"method": "lp", "bound": guide.bound})
        best = _lines_step(problem, ga, guide, deadline, phases)
        if best.optimal:
            return best, phases
    return _highs(problem, best, guide, deadline, phases), phases


def _lp_now(problem: CartProblem, ends: float) -> Any:
    from gpu_engine.solvers.milp.neighbourhood import lp_guide

    return lp_guide(problem, deadline=ends) if ends > now() else None


def _ga_alone(
    problem: CartProblem, ga: Solution, deadline: Deadline, seed: int, device: str, phases: Phases
) -> Solution:
    """Past HiGHS's exact money range: the GA again, from the next seed, on the rest."""
    from gpu_engine.solvers.ga.solve import solve_ga

    left = deadline.left_ms()
    if left < 1.0:
        return ga
    more = solve_ga(problem, budget_ms=left, seed=seed + 1, device=device)
    phases.append(phase(f"{device}-ga", more))
    return more if more.total < ga.total else ga


def _lines_step(
    problem: CartProblem, ga: Solution, guide: Any, deadline: Deadline, phases: Phases
) -> Solution:
    """The lines neighbourhood of the GA's answer; the LP's bound may prove the result."""
    from gpu_engine.planning.anytime import choice_of
    from gpu_engine.planning.routes import with_lns
    from gpu_engine.solvers.milp.neighbourhood import LnsResult, lines_step
    from gpu_engine.solvers.milp.runner import milp_proves

    ms = LINES_SHARE * deadline.left_ms()
    result = LnsResult(choice=choice_of(problem, ga), total=ga.total, bound=guide.bound)
    if ms >= MIN_LINES_MS and not milp_proves(ga.total, guide.bound):
        lines_step(problem, guide, result, left_ms=ms)
    answer, record = with_lns(problem, ga, result, budget_ms=ms, beside=False)
    phases.append(
        {"method": "lines", "total": answer.total, "proven": answer.optimal, "steps": record.steps}
    )
    return answer


def _highs(
    problem: CartProblem, best: Solution, guide: Any, deadline: Deadline, phases: Phases
) -> Solution:
    """HiGHS's whole program (the LP's build where there is one) warm-started with ``best``."""
    from gpu_engine.planning.anytime import choice_of
    from gpu_engine.solvers.milp.runner import milp_answer, milp_run

    left = deadline.left_ms()
    if left < 1.0:
        return best
    warm = choice_of(problem, best)
    started = time.perf_counter()
    outcome = milp_run(
        problem,
        time_limit_ms=left,
        warm_start=warm,
        model=None if guide is None else guide.model,
    )
    milp = milp_answer(problem, outcome, warm_start=warm, started=started)
    phases.append(phase("milp", milp, status=str(outcome.status)))
    if milp is None:
        return best
    if milp.optimal and milp.total <= best.total:
        return milp  # the same total or less, and it carries the proof
    return milp if milp.total < best.total else best
