"""What narrows the catalog's list (``CatalogFilters``), and its query shape: the filters with
sentinels in place of their values, for SQL compiled once per shape
(``storefront.catalog.sql_shapes``).
"""

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db.models import QuerySet

from storefront.catalog.sql_shapes import Slots, shaped_list
from storefront.search.query import PreparedSearch, search_shape

if TYPE_CHECKING:
    from storefront.search.delivered import DeliveredTerms


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


def filters_shape(filters: CatalogFilters, slots: Slots) -> tuple[Hashable, CatalogFilters] | None:
    """The shape of ``filters`` (what decides the SQL's text) and the filters with sentinels
    from ``slots`` for their values; None when they have no fixed shape: an unprepared
    query, or free shipping to a destination (its condition is built from the merchants'
    terms there)."""
    if filters.ships_free_to or (isinstance(filters.query, str) and filters.query.strip()):
        return None
    query: str | PreparedSearch = ""
    query_key: Hashable = None
    if isinstance(filters.query, PreparedSearch):
        query_key, query = search_shape(filters.query, slots)
    category = filters.category
    category_key: str | None = None
    if category not in (None, ""):
        if isinstance(category, int) or str(category).isdigit():
            category_key, category = "id", slots.number(int(category))
        else:
            category_key, category = "slug", slots.text(str(category))
    merchant_id = filters.merchant_id
    if merchant_id is not None:
        merchant_id = slots.number(merchant_id)
    key = (
        query_key,
        category_key,
        merchant_id is not None,
        bool(filters.available_only),
        filters.price_range,
    )
    sentinel = CatalogFilters(
        query=query,
        category=category,
        merchant_id=merchant_id,
        available_only=bool(filters.available_only),
        price_range=filters.price_range,
    )
    return key, sentinel


def filters_with_sentinels(filters: CatalogFilters, slots: Slots) -> CatalogFilters:
    """``filters`` with sentinels from ``slots`` (for filters that have a shape)."""
    shape = filters_shape(filters, slots)
    if shape is None:
        raise ValueError("These filters have no fixed shape.")
    return shape[1]


def filtered_rows(
    *,
    name: Hashable,
    filters: CatalogFilters,
    query: "Callable[[CatalogFilters, DeliveredTerms | None], QuerySet]",
    window: tuple[int, int] | None = None,
    terms: "DeliveredTerms | None" = None,
) -> list:
    """The rows of ``query(filters, terms)`` (its ``window`` slice), from SQL compiled once
    per ``name``, shape of the filters and shape of the delivered ``terms`` (their values
    are parameters too); plainly where the filters have no shape."""
    slots = Slots()
    shape = filters_shape(filters, slots)
    if shape is None:
        queryset = query(filters, terms)
        return list(queryset if window is None else queryset[window[0] : window[1]])
    if terms is not None:
        terms.with_sentinels(slots)  # the request's values, after the filters'

    def build(sentinels: Slots) -> QuerySet:
        chosen = filters_with_sentinels(filters, sentinels)
        return query(chosen, None if terms is None else terms.with_sentinels(sentinels))

    return shaped_list(
        key=(name, shape[0], None if terms is None else terms.shape),
        slots=slots,
        build=build,
        plain=lambda: query(filters, terms),
        window=window,
    )
