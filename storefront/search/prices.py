"""The catalog's price ranges (a facet), on a product's cheapest buyable price."""

from dataclasses import dataclass
from itertools import pairwise

from django.db.models import Func, IntegerField, Q

from storefront.money import format_money


@dataclass(frozen=True)
class PriceRange:
    key: str  # in the URL: "10-25" (currency units), "250-" (and more)
    low: int  # cents, included
    high: int | None  # cents, excluded; None: no upper end

    @property
    def label(self) -> str:
        if self.low == 0 and self.high is not None:
            return f"Under {format_money(self.high)}"
        if self.high is None:
            return f"{format_money(self.low)} and more"
        return f"{format_money(self.low)} to {format_money(self.high)}"

    def q(self, field: str = "best_price") -> Q:
        condition = Q(**{f"{field}__gte": self.low})
        if self.high is not None:
            condition &= Q(**{f"{field}__lt": self.high})
        return condition


def _ranges(bounds: list[int]) -> tuple[PriceRange, ...]:
    edges = [0, *bounds]
    ranges = [
        PriceRange(key=f"{low // 100}-{high // 100}", low=low, high=high)
        for low, high in pairwise(edges)
    ]
    return (*ranges, PriceRange(key=f"{bounds[-1] // 100}-", low=bounds[-1], high=None))


PRICE_RANGES = _ranges([1000, 2500, 5000, 10000, 25000])
PRICE_RANGE_KEYS = {price_range.key: price_range for price_range in PRICE_RANGES}


def _contiguous(ranges: tuple[PriceRange, ...]) -> tuple[int, ...]:
    """The lower bounds of all ranges but the first, which must tile [0, infinity)."""
    assert ranges[0].low == 0 and ranges[-1].high is None
    assert all(a.high == b.low for a, b in pairwise(ranges))
    return tuple(r.low for r in ranges[1:])


class PriceRangeIndex(Func):
    """The index in ``PRICE_RANGES`` of a price (NULL stays NULL), for grouping by range.

    PostgreSQL's ``width_bucket`` reads the price once, which matters when it is the best
    offer's CASE of subqueries; elsewhere a CASE on it."""

    output_field = IntegerField()
    bounds = _contiguous(PRICE_RANGES)

    def as_sql(
        self, compiler, connection, function=None, template=None, arg_joiner=None, **extra_context
    ):
        price, params = compiler.compile(self.get_source_expressions()[0])
        whens = [f"WHEN ({price}) IS NULL THEN NULL"]
        whens += [f"WHEN ({price}) < {bound} THEN {i}" for i, bound in enumerate(self.bounds)]
        return f"CASE {' '.join(whens)} ELSE {len(self.bounds)} END", tuple(params) * len(whens)

    def as_postgresql(self, compiler, connection, **extra_context):
        price, params = compiler.compile(self.get_source_expressions()[0])
        array = ", ".join(str(bound) for bound in self.bounds)
        return f"width_bucket(({price})::bigint, ARRAY[{array}]::bigint[])", tuple(params)
