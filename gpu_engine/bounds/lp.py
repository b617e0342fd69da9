"""The LP relaxation of the cart's exact MILP as a lower bound, in whole cents.

The MILP (:mod:`gpu_engine.solvers.milp.model`) prices every assignment exactly as the spec
does, so the optimum of its linear relaxation is at most the cart's optimum. HiGHS solves that LP
in floating point; the bound is its objective less a slack (relative and absolute, well above
HiGHS's tolerances) rounded up to a cent: costs are integral, so an answer whose total is at most
the rounded bound is optimal. Solved with the dual simplex, whose objective only grows towards the
optimum: a run cut by its time limit gives no bound (never a guess).
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass

from gpu_engine.problem import CartProblem
from gpu_engine.solvers.milp.model import BuildCancelled, milp_build

# Safety below HiGHS's objective: its primal/dual feasibility tolerances (1e-7) scaled by the
# size of the costs stay far under these.
_ABS_SLACK = 1e-3
_REL_SLACK = 1e-7
# One HiGHS at a time per process, shared with the MILP runner's lock would couple the modules:
# LP solves are short and run on the caller's thread.
_LP_LOCK = threading.Lock()


@dataclass(frozen=True, slots=True)
class LpBound:
    """``bound``: a proven lower bound in cents (None: none within the time). ``ms``: wall time."""

    bound: int | None
    status: str
    ms: float


def lp_bound(problem: CartProblem, *, time_limit_ms: float | None = None) -> LpBound:
    """The LP relaxation's bound (see the module docstring), within ``time_limit_ms``."""
    import highspy

    started = time.perf_counter()
    deadline = None if time_limit_ms is None else started + time_limit_ms / 1e3

    def expired() -> bool:
        return deadline is not None and time.perf_counter() >= deadline

    try:
        milp = milp_build(problem, cancelled=expired)
    except BuildCancelled:
        return LpBound(None, "cut in the build", (time.perf_counter() - started) * 1e3)
    lp = milp.model.to_highs_lp()
    lp.integrality_ = []
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    highs.setOptionValue("threads", 1)
    highs.setOptionValue("solver", "simplex")
    if deadline is not None:
        left = deadline - time.perf_counter()
        if left <= 0:
            return LpBound(None, "cut in the build", (time.perf_counter() - started) * 1e3)
        highs.setOptionValue("time_limit", left)
    highs.passModel(lp)
    with _LP_LOCK:
        highs.run()
    status = highs.modelStatusToString(highs.getModelStatus())
    ms = (time.perf_counter() - started) * 1e3
    if highs.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return LpBound(None, status, ms)
    value = highs.getInfo().objective_function_value
    if not math.isfinite(value):
        return LpBound(None, status, ms)
    slack = _ABS_SLACK + _REL_SLACK * abs(value)
    return LpBound(max(0, math.ceil(value - slack)), status, ms)
