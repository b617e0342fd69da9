"""The catalog's facets: for each value, how many products the list would show if that value
were chosen on top of the other filters (a facet's own choice is left out of its counts)."""

from dataclasses import dataclass, field, replace

from django.db.models import Count, Q

from storefront import selectors
from storefront.models import Offer
from storefront.search.prices import PRICE_RANGES
from storefront.search.query import PreparedSearch, search_prepare


@dataclass(frozen=True)
class CatalogFilters:
    """The arguments of ``selectors.product_list`` that narrow the list."""

    query: "str | PreparedSearch" = ""
    category: str | int | None = None
    merchant_id: int | None = None
    available_only: bool = False
    price_range: str = ""
    ships_free_to: str = ""

    def kwargs(self) -> dict:
        return {
            "query": self.query,
            "category": self.category,
            "merchant_id": self.merchant_id,
            "available_only": self.available_only,
            "price_range": self.price_range,
            "ships_free_to": self.ships_free_to,
        }


@dataclass(frozen=True)
class FacetValue:
    key: str
    label: str
    count: int
    selected: bool


@dataclass(frozen=True)
class Facets:
    categories: tuple[FacetValue, ...]
    merchants: tuple[FacetValue, ...]
    price_ranges: tuple[FacetValue, ...]
    in_stock: FacetValue
    ships_free: FacetValue | None  # None without a postal code to ship to
    postal_code: str = ""
    filters: CatalogFilters = field(default_factory=CatalogFilters)

    @property
    def chosen(self) -> int:
        """How many facet values narrow the list now."""
        values = [*self.categories, *self.merchants, *self.price_ranges, self.in_stock]
        if self.ships_free is not None:
            values.append(self.ships_free)
        return sum(value.selected for value in values)


def _selected_category(filters: CatalogFilters, pk: int, slug: str) -> bool:
    return str(filters.category) in (str(pk), slug)


def _products(filters: CatalogFilters, ships_free_q: Q | None):
    return selectors.product_list(**filters.kwargs(), ships_free_q=ships_free_q).order_by()


def _category_facet(filters: CatalogFilters, ships_free_q) -> tuple[FacetValue, ...]:
    rows = (
        _products(replace(filters, category=None), ships_free_q)
        .values("category_id", "category__slug", "category__name")
        .annotate(n=Count("pk"))
        .order_by("category__name")
    )
    return tuple(
        FacetValue(
            key=row["category__slug"],
            label=row["category__name"],
            count=row["n"],
            selected=_selected_category(filters, row["category_id"], row["category__slug"]),
        )
        for row in rows
    )


def _merchant_facet(filters: CatalogFilters, ships_free_q) -> tuple[FacetValue, ...]:
    products = _products(replace(filters, merchant_id=None), ships_free_q).values("pk")
    rows = (
        Offer.objects.filter(active=True, merchant__active=True, product__in=products)
        .values("merchant_id", "merchant__name")
        .annotate(n=Count("product_id", distinct=True))
        .order_by("merchant__name", "merchant_id")
    )
    return tuple(
        FacetValue(
            key=str(row["merchant_id"]),
            label=row["merchant__name"],
            count=row["n"],
            selected=row["merchant_id"] == filters.merchant_id,
        )
        for row in rows
    )


def _toggle_counts(filters: CatalogFilters, ships_free_q: Q | None) -> dict[str, int]:
    """One aggregate for the price ranges, in-stock and ships-free, each counted with the
    other two as chosen."""
    base = _products(replace(filters, price_range="", available_only=False, ships_free_to=""), None)
    chosen_range = next((r for r in PRICE_RANGES if r.key == filters.price_range), None)
    in_stock = Q(best_price__isnull=False)
    price_q = chosen_range.q() if chosen_range else Q()
    stock_q = in_stock if filters.available_only else Q()
    free_q = ships_free_q if (filters.ships_free_to and ships_free_q is not None) else Q()
    counts = {f"range:{r.key}": Count("pk", filter=r.q() & stock_q & free_q) for r in PRICE_RANGES}
    counts["in_stock"] = Count("pk", filter=in_stock & price_q & free_q)
    if ships_free_q is not None:
        counts["ships_free"] = Count("pk", filter=ships_free_q & price_q & stock_q)
    return base.aggregate(**counts)


def product_facets(*, filters: CatalogFilters, postal_code: str = "") -> Facets:
    """Counts for every facet of the catalog under ``filters``; "ships free" is offered
    for ``postal_code`` (the shopper's destination) when there is one. A bounded number of
    queries whatever the catalog's size: the search's preparation (none when ``filters``
    carry a ``PreparedSearch``), categories, merchants, the other counts, and the merchants'
    terms for the destination (two)."""
    if isinstance(filters.query, str) and filters.query.strip():
        filters = replace(filters, query=search_prepare(filters.query))
    ships_free_q = selectors.product_ships_free_q(postal_code=postal_code) if postal_code else None
    filters = replace(filters, ships_free_to=postal_code if filters.ships_free_to else "")
    counts = _toggle_counts(filters, ships_free_q)
    ships_free = None
    if ships_free_q is not None:
        ships_free = FacetValue(
            key="1",
            label=f"Ships free to {postal_code}",
            count=counts["ships_free"],
            selected=bool(filters.ships_free_to),
        )
    return Facets(
        categories=_category_facet(filters, ships_free_q),
        merchants=_merchant_facet(filters, ships_free_q),
        price_ranges=tuple(
            FacetValue(
                key=r.key,
                label=r.label,
                count=counts[f"range:{r.key}"],
                selected=r.key == filters.price_range,
            )
            for r in PRICE_RANGES
        ),
        in_stock=FacetValue(
            key="1", label="In stock", count=counts["in_stock"], selected=filters.available_only
        ),
        ships_free=ships_free,
        postal_code=postal_code,
        filters=filters,
    )
