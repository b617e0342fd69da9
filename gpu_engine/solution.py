"""What every solver returns: one :class:`Solution` type, JSON-safe through ``to_dict``."""

from __future__ import annotations

import decimal
import math
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Parcel:
    """One fulfillment node's parcel: the lines it ships, their units and weight (grams), and
    the fee charged (0 when the merchant's goods reach its free-shipping threshold)."""

    node: str
    lines: tuple[str, ...]
    units: int
    weight_g: int
    fee: int

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["lines"] = list(self.lines)
        return data


@dataclass(frozen=True)
class MerchantCost:
    """One merchant's shipment under an assignment (all money in integer cents)."""

    merchant: str
    lines: tuple[str, ...]
    units: int
    subtotal: int
    discount: int
    shipping: int
    cost: int
    parcels: tuple[Parcel, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["lines"] = list(self.lines)
        data["parcels"] = [p.to_dict() for p in self.parcels]
        return data


@dataclass
class Solution:
    """A solver's answer.

    ``optimal`` is True only when the solver proved the total minimal; otherwise ``gap`` is the
    proven relative gap to a lower bound when one is known. ``complexity`` is the number of
    assignments (exact int). ``estimates`` holds the estimated full-search seconds on CPU and GPU
    from measured rates; ``plan`` says why this algorithm was chosen (the planner fills it).
    """

    total: int
    assignment: dict[str, str]
    breakdown: list[MerchantCost]
    optimal: bool
    algorithm: str
    device: str
    elapsed_ms: float
    complexity: int
    estimates: dict[str, float] = field(default_factory=dict)
    plan: dict[str, Any] | None = None
    gap: float | None = None
    stats: dict[str, Any] = field(default_factory=dict)
    # Line id -> the node that ships it (spec version 2's answer; every line, v1 carts too).
    nodes: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": int(self.total),
            "assignment": dict(self.assignment),
            "nodes": dict(self.nodes),
            "breakdown": [c.to_dict() for c in self.breakdown],
            "optimal": bool(self.optimal),
            "algorithm": self.algorithm,
            "device": self.device,
            "elapsed_ms": float(self.elapsed_ms),
            "complexity": _json_count(self.complexity),
            "estimates": json_safe({k: float(v) for k, v in self.estimates.items()}),
            "plan": self.plan,
            "gap": None if self.gap is None else float(self.gap),
            "stats": json_safe(self.stats),
        }


# Python refuses to print ints of more than 4300 digits (sys.get_int_max_str_digits), and JSON
# readers in other languages lose precision far earlier: a cart's assignment count past this
# many digits is given as the string of its decimal digits (README, "The answer").
MAX_COUNT_DIGITS = 4000


def _json_count(value: int) -> int | str:
    value = int(value)
    if value.bit_length() * 0.30103 < MAX_COUNT_DIGITS:
        return value
    # ``decimal`` converts without the limit (and in quasi-linear time).
    return str(decimal.Decimal(value))


def json_safe(value: Any) -> Any:
    """``value`` as strict JSON can hold it: NumPy scalars (they sneak into solver stats) as
    Python numbers, tuples as lists, keys as strings, and a non-finite float (an infinite
    predicted time) as None, which JSON (and PostgreSQL's jsonb) has instead."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
