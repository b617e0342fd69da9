"""The clock a plan runs on: every reading of the time by the executor and its routes is made
here, so that a test can replace ``time`` in this one module."""

from __future__ import annotations

import time
from dataclasses import dataclass


def now() -> float:
    """``time.perf_counter()`` (seconds)."""
    return time.perf_counter()


@dataclass(frozen=True)
class Deadline:
    """A budget of ``budget_ms`` started at ``started`` (a :func:`now` reading)."""

    started: float
    budget_ms: float

    def left_ms(self) -> float:
        """What the budget has left (negative once it is over)."""
        return self.budget_ms - (now() - self.started) * 1e3

    def remaining_ms(self) -> float:
        """What a solver is handed: what is left, and at least 1 ms."""
        return max(1.0, self.left_ms())

    def spent_ms(self) -> float:
        return (now() - self.started) * 1e3
