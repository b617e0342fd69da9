"""The refusals of the cart problem: every one names the field and the value."""

from __future__ import annotations

from typing import Any


class ProblemError(ValueError):
    """Bad cart input. ``field`` is a path such as ``offers[3].price``; ``value`` the bad value."""

    def __init__(self, field: str, value: Any, reason: str) -> None:
        self.field = field
        self.value = value
        self.reason = reason
        super().__init__(f"{field}: {reason} (got {value!r})")


class CapacityError(ProblemError):
    """A valid cart that is too large for the chosen algorithm (memory, int64 numbering)."""


class BudgetError(CapacityError, RuntimeError):
    """A valid cart that the chosen algorithm cannot answer within its budget: refused before
    it starts (its predicted time is far over) or nothing found in time. ``field`` is
    ``budget_ms``. Also a RuntimeError: callers that fall back on a run-time failure (the
    planner) treat it as one."""


class DeviceUnavailable(CapacityError):
    """A GPU algorithm asked for where no CUDA GPU (nor the simulator) is available. ``field``
    is ``algorithm``."""


class FulfillmentUnsupported(CapacityError):
    """A version 2 cart (several nodes for a merchant, or weight tiers) given to an algorithm
    that prices version 1 carts only. ``field`` is ``algorithm``."""
