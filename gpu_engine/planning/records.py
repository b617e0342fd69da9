"""Typed records of the phases a plan ran: each turns into its entry of ``plan["ran"]`` (and of
``stats["phases"]``) through ``as_dict``, with the keys in the order the answer's JSON has them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpu_engine.solution import Solution


@dataclass(frozen=True)
class Outcome:
    """What a phase's answer was: its time (ms, rounded), total and proof."""

    ms: float
    total: int
    optimal: bool

    @classmethod
    def of(cls, solution: Solution) -> Outcome:
        return cls(round(solution.elapsed_ms, 3), solution.total, solution.optimal)

    def as_dict(self) -> dict[str, Any]:
        return {"ms": self.ms, "total": self.total, "optimal": self.optimal}


@dataclass(frozen=True)
class Skipped:
    """A phase that did not run, and why."""

    phase: str
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"phase": self.phase, "skipped": self.reason}


@dataclass(frozen=True)
class SolverRun:
    """A method that ran on its own (an exact method, or the CPU GA of a last fallback)."""

    phase: str
    outcome: Outcome

    def as_dict(self) -> dict[str, Any]:
        return {"phase": self.phase, **self.outcome.as_dict()}


@dataclass(frozen=True)
class GaRun:
    """The GA phase of a route: its budget and why it stopped; after HiGHS first, the bound it
    was given (``after_highs``)."""

    device: str
    outcome: Outcome
    budget_ms: float
    stop: str
    after_highs: bool = False
    bound: int | None = None

    def as_dict(self) -> dict[str, Any]:
        record = {
            "phase": f"{self.device}-ga",
            **self.outcome.as_dict(),
            "budget_ms": round(self.budget_ms, 3),
            "stop": self.stop,
        }
        if self.after_highs:
            record["bound"] = self.bound
        return record


@dataclass(frozen=True)
class RestartsRun:
    """The GA restarting from new seeds on the rest of the budget."""

    device: str
    outcome: Outcome
    budget_ms: float
    seed: int
    restarts: int
    stop: str
    bound: int | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "phase": f"{self.device}-ga-restarts",
            **self.outcome.as_dict(),
            "budget_ms": round(self.budget_ms, 3),
            "seed": self.seed,
            "restarts": self.restarts,
            "stop": self.stop,
            "bound": self.bound,
        }


@dataclass(frozen=True)
class HighsRun:
    """A HiGHS run that returned: its answer's outcome (None: no answer), HiGHS's status, whether
    its deadline cut it and whether it failed; ``warm_start``: the total a proof started from."""

    outcome: Outcome | None
    budget_ms: float
    status: str
    cut: bool
    failed: bool
    warm_start: int | None = None

    def as_dict(self) -> dict[str, Any]:
        record: dict[str, Any] = {"phase": "milp"}
        if self.outcome is not None:
            record.update(self.outcome.as_dict())
        record["budget_ms"] = round(self.budget_ms, 3)
        if self.warm_start is not None:
            record["warm_start"] = self.warm_start
        record.update(status=self.status, cut=self.cut, failed=self.failed)
        return record


@dataclass(frozen=True)
class HighsError:
    """A HiGHS run that raised."""

    budget_ms: float
    error: str

    def as_dict(self) -> dict[str, Any]:
        budget = round(self.budget_ms, 3)
        return {"phase": "milp", "budget_ms": budget, "failed": True, "error": self.error}


@dataclass(frozen=True)
class LnsRun:
    """The large-neighbourhood step: its steps' time, its answer's total, whether the answer it
    leaves is proven, and its LP bound (None: the LP did not finish)."""

    total: int
    optimal: bool
    budget_ms: float
    beside_gpu_ga: bool
    bound: float | None
    steps: list[dict[str, Any]]

    @property
    def ms(self) -> float:
        return round(sum(step["ms"] for step in self.steps), 3)

    def as_dict(self) -> dict[str, Any]:
        return {
            "phase": "lns",
            "ms": self.ms,
            "total": self.total,
            "optimal": self.optimal,
            "budget_ms": round(self.budget_ms, 3),
            "beside_gpu_ga": self.beside_gpu_ga,
            "bound": self.bound,
            "steps": self.steps,
        }


@dataclass(frozen=True)
class LpRun:
    """The LP relaxation's bound after the GA."""

    ms: float
    bound: int | None
    status: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "phase": "lp-bound",
            "ms": round(self.ms, 3),
            "bound": self.bound,
            "status": self.status,
        }


PhaseRecord = Skipped | SolverRun | GaRun | RestartsRun | HighsRun | HighsError | LnsRun | LpRun


def as_dicts(records: tuple[PhaseRecord, ...] | list[PhaseRecord]) -> list[dict[str, Any]]:
    return [record.as_dict() for record in records]
