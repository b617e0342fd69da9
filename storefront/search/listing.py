"""The catalog's product list as the paginator reads it: one page at a time, each page one
query from SQL compiled once per shape of the filters and order
(``storefront.catalog.sql_shapes``).

With delivered ``terms`` (the shop's pages) the list's price is each product's delivered
price for the shopper's destination (``storefront.search.delivered``): its price orders,
price ranges and "in stock" read that; without, the lowest item price (the API's list).
"""

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, overload

from django.db.models import QuerySet

from storefront.catalog import selectors
from storefront.errors import ValidationFailed
from storefront.models import Product
from storefront.search.delivered import (
    DELIVERED_ORDERINGS,
    DeliveredTerms,
    delivered_price_filter,
    products_with_delivered_price,
)
from storefront.search.filters import CatalogFilters, filtered_rows

if TYPE_CHECKING:
    from storefront.catalog.selectors import ProductWithBestOffer


def delivered_product_list(
    *, filters: CatalogFilters, ordering: str, terms: DeliveredTerms
) -> QuerySet[Product]:
    """``selectors.product_list``'s products, filters and orders, each annotated with
    ``delivered_price`` under ``terms`` (None when nothing is buyable) in place of the best
    offer's item price: the price orders, the price range and "in stock" read it."""
    if ordering not in selectors.PRODUCT_ORDERINGS:
        raise ValidationFailed(
            f"Unknown ordering {ordering!r}; use one of {', '.join(selectors.PRODUCT_ORDERINGS)}.",
            field="ordering",
        )
    chosen_range = selectors.price_range_get(key=filters.price_range)
    query = filters.query.strip() if isinstance(filters.query, str) else filters.query
    if not query and ordering == "relevance":
        ordering = "name"
    products = selectors.product_match_list(
        products=products_with_delivered_price(Product.objects.select_related("category"), terms),
        query=query,
        category=filters.category,
        merchant_id=filters.merchant_id,
        ships_free_to=filters.ships_free_to,
    )
    products = delivered_price_filter(
        products, available_only=filters.available_only, price_range=chosen_range
    )
    order = DELIVERED_ORDERINGS.get(ordering) or selectors.PRODUCT_ORDERINGS[ordering]
    return products.order_by(*order)


def product_list_window(
    *,
    filters: CatalogFilters,
    ordering: str,
    start: int,
    stop: int,
    terms: DeliveredTerms | None = None,
) -> "list[ProductWithBestOffer]":
    """``selectors.product_list(**filters.kwargs(), ordering=ordering)[start:stop]``, or
    with ``terms`` ``delivered_product_list(...)[start:stop]``."""
    if start >= stop:
        return []  # as an empty slice of the queryset: no query
    if terms is not None:
        return filtered_rows(
            name=("delivered_list", ordering),
            filters=filters,
            query=lambda chosen, chosen_terms: delivered_product_list(
                filters=chosen, ordering=ordering, terms=chosen_terms or terms
            ),
            window=(start, stop),
            terms=terms,
        )
    return filtered_rows(
        name=("product_list", ordering),
        filters=filters,
        query=lambda chosen, _: selectors.product_list(**chosen.kwargs(), ordering=ordering),
        window=(start, stop),
    )


class ProductListPages(Sequence):
    """The products under ``filters`` for a paginator told their ``count`` (the facets count
    them): slicing reads one page."""

    ordered = True  # the paginator warns about unordered lists

    def __init__(
        self,
        *,
        filters: CatalogFilters,
        ordering: str,
        count: int,
        terms: DeliveredTerms | None = None,
    ) -> None:
        self.filters, self.ordering, self.total = filters, ordering, count
        self.terms = terms

    def __len__(self) -> int:
        return self.total

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, int):
            rows = self[index : index + 1]
            if not rows:
                raise IndexError(index)
            return rows[0]
        start, stop, step = index.indices(self.total)
        if step != 1:
            raise ValueError("Pages are contiguous slices.")
        return product_list_window(
            filters=self.filters,
            ordering=self.ordering,
            start=start,
            stop=stop,
            terms=self.terms,
        )
