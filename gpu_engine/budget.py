"""Time budgets: one validation for every place a budget enters the engine, and the deadline
helpers the solvers share.

A budget is a number of milliseconds, finite, > 0 and at most :data:`MAX_BUDGET_MS` (one hour:
longer runs are benchmarks, which pass no budget at all). ``None`` means no limit.
"""

from __future__ import annotations

import math
import numbers
import time
from typing import Any

from gpu_engine.problem import BudgetError, ProblemError

MAX_BUDGET_MS = 3_600_000.0
# A solver refuses up front when its predicted time is more than this many budgets.
FAR_OVER = 4.0


def check_budget(value: Any, *, field: str = "budget_ms") -> float | None:
    """``value`` as a float budget, or None; raises ProblemError naming ``field`` otherwise."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ProblemError(field, value, "must be a number of milliseconds")
    if not math.isfinite(value):
        raise ProblemError(field, value, "must be a finite number of milliseconds")
    if value <= 0:
        raise ProblemError(field, value, "must be > 0 milliseconds")
    if value > MAX_BUDGET_MS:
        raise ProblemError(field, value, f"must be at most {MAX_BUDGET_MS:.0f} ms")
    return float(value)


# Seeds feed the GA's 64-bit random states and JSON stats: non-negative int64 values.
MAX_SEED = 2**63 - 1


def check_seed(value: Any) -> int:
    """``value`` as a seed; raises ProblemError naming ``seed`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ProblemError("seed", value, "must be an integer")
    seed = int(value)
    if not 0 <= seed <= MAX_SEED:
        raise ProblemError("seed", value, f"must be from 0 to {MAX_SEED}")
    return seed


def deadline(started: float, budget_ms: float | None) -> float | None:
    """The ``time.perf_counter()`` value at which the budget is spent (None: no limit)."""
    return None if budget_ms is None else started + budget_ms / 1e3


def expired(at: float | None) -> bool:
    return at is not None and time.perf_counter() >= at


def refuse_if_far_over(algorithm: str, predicted_ms: float, budget_ms: float | None) -> None:
    """Refuse before starting when ``predicted_ms`` is more than :data:`FAR_OVER` budgets."""
    if budget_ms is None or predicted_ms <= FAR_OVER * budget_ms:
        return
    shown = f"{predicted_ms:.3g} ms" if math.isfinite(predicted_ms) else "forever"
    raise BudgetError(
        "budget_ms",
        budget_ms,
        f"{algorithm} would take about {shown} on this cart, far over the budget; "
        "give more time or use algorithm auto",
    )
