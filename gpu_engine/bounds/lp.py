"""The LP relaxation of the cart's exact MILP as a lower bound, in whole cents.

The MILP (:mod:`gpu_engine.solvers.milp.model`) prices every assignment exactly as the spec
does, so the optimum of its linear relaxation is at most the cart's optimum. HiGHS solves that LP
in floating point; the bound is its optimal objective less a slack (relative and absolute, well
above HiGHS's tolerances) rounded up to a cent: costs are integral, so an answer whose total is at
most the rounded bound is optimal. The LP runs under the MILP runner's hard deadline
(:func:`gpu_engine.solvers.milp.runner.milp_run`); a run cut by it, or that HiGHS stopped before
the LP's optimum, gives no bound (never a guess).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpu_engine.problem import CartProblem

# Safety below HiGHS's objective: its primal/dual feasibility tolerances (1e-7) scaled by the
# size of the costs stay far under these.
_ABS_SLACK = 1e-3
_REL_SLACK = 1e-7


@dataclass(frozen=True, slots=True)
class LpBound:
    """``bound``: a proven lower bound in cents (None: none within the time). ``ms``: wall time,
    of which ``build_ms`` building the program (the rest is HiGHS's)."""

    bound: int | None
    status: str
    ms: float
    build_ms: float = 0.0


def lp_bound(problem: CartProblem, *, time_limit_ms: float | None = None) -> LpBound:
    """The LP relaxation's bound (see the module docstring), within ``time_limit_ms``. A version 2
    cart's program is :mod:`gpu_engine.solvers.milp.fulfilled`'s (the runner picks it), exact
    on every assignment as the simple one is, so its relaxation bounds the optimum too."""
    from gpu_engine.solvers.milp.runner import milp_run

    outcome = milp_run(problem, time_limit_ms=time_limit_ms, relaxed=True)
    ms = outcome.build_ms + outcome.solve_ms
    if outcome.cut or not math.isfinite(outcome.bound):
        return LpBound(None, outcome.status, ms, outcome.build_ms)
    value = outcome.bound
    slack = _ABS_SLACK + _REL_SLACK * abs(value)
    return LpBound(max(0, math.ceil(value - slack)), outcome.status, ms, outcome.build_ms)
