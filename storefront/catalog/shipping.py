"""Shipping rules and their resolution for a destination, as plain values.

No database access here: selectors fetch merchants and zones, these functions decide.
The rule for a destination is the merchant's zone with the longest postal prefix that the
destination starts with (an empty prefix matches everything), else the merchant's defaults.
"""

from collections.abc import Iterable
from dataclasses import dataclass

from storefront.validators import postal_match_key


@dataclass(frozen=True, slots=True)
class ShippingRule:
    """The ``shipping`` object of the pricing contract, plus where it came from.

    ``zone_prefix`` is ``None`` for the merchant's defaults, else the matching zone's prefix
    (``""`` for an everywhere zone).
    """

    base_fee: int
    per_extra_unit: int
    free_over: int | None
    zone_prefix: str | None = None

    def as_spec(self) -> dict[str, int | None]:
        return {
            "base_fee": self.base_fee,
            "per_extra_unit": self.per_extra_unit,
            "free_over": self.free_over,
        }


@dataclass(frozen=True, slots=True)
class Discount:
    """The ``discount`` object of the pricing contract."""

    min_units: int
    basis_points: int

    def as_spec(self) -> dict[str, int]:
        return {"min_units": self.min_units, "basis_points": self.basis_points}

    @classmethod
    def from_columns(cls, min_units: int | None, basis_points: int | None) -> "Discount | None":
        """A merchant's discount from its two columns; None unless both are set."""
        if min_units is None or basis_points is None:
            return None
        return cls(min_units=min_units, basis_points=basis_points)


def postal_prefix_candidates(postal_code: str | None) -> list[str]:
    """Every prefix that could match ``postal_code``, longest first, ending with ``""``.

    Postal codes are at most 10 characters, so this bounds a zone lookup to an ``IN`` of at
    most 11 values instead of scanning a merchant's zones.
    """
    key = postal_match_key(postal_code)
    return [key[:length] for length in range(len(key), -1, -1)]


def shipping_rule_resolve(
    *, default: ShippingRule, zones: Iterable[ShippingRule], postal_code: str | None
) -> ShippingRule:
    """The zone with the longest prefix matching ``postal_code``, else ``default``.

    ``zones`` are one merchant's zone rules (``zone_prefix`` set); non-matching ones are
    ignored, so callers may pass every zone or only the pre-filtered candidates.
    """
    key = postal_match_key(postal_code)
    best: ShippingRule | None = None
    for zone in zones:
        prefix = zone.zone_prefix or ""
        if key.startswith(prefix) and (best is None or len(prefix) > len(best.zone_prefix or "")):
            best = zone
    return best if best is not None else default
