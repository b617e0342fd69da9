"""The catalog's product list as the paginator reads it: one page at a time, each page one
query from SQL compiled once per shape of the filters and order
(``storefront.catalog.sql_shapes``)."""

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, overload

from storefront.catalog import selectors
from storefront.search.filters import CatalogFilters, filtered_rows

if TYPE_CHECKING:
    from storefront.catalog.selectors import ProductWithBestOffer


def product_list_window(
    *, filters: CatalogFilters, ordering: str, start: int, stop: int
) -> "list[ProductWithBestOffer]":
    """``selectors.product_list(**filters.kwargs(), ordering=ordering)[start:stop]``."""
    if start >= stop:
        return []  # as an empty slice of the queryset: no query
    return filtered_rows(
        name=("product_list", ordering),
        filters=filters,
        query=lambda chosen: selectors.product_list(**chosen.kwargs(), ordering=ordering),
        window=(start, stop),
    )


class ProductListPages(Sequence):
    """The products under ``filters`` for a paginator told their ``count`` (the facets count
    them): slicing reads one page."""

    ordered = True  # the paginator warns about unordered lists

    def __init__(self, *, filters: CatalogFilters, ordering: str, count: int) -> None:
        self.filters, self.ordering, self.total = filters, ordering, count

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
            filters=self.filters, ordering=self.ordering, start=start, stop=stop
        )
