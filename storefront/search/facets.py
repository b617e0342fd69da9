"""The catalog's facets: for each value, how many products the list would show if that value
were chosen on top of the other filters (a facet's own choice is left out of its counts)."""

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from django.db.models import BooleanField, Count, ExpressionWrapper, Q, QuerySet

from storefront.catalog import selectors
from storefront.catalog.sql_shapes import Slots, shaped_list
from storefront.models import Merchant, Offer, Product
from storefront.search.delivered import (
    DeliveredTerms,
    delivered_price_filter,
    products_with_delivered_price,
)
from storefront.search.filters import CatalogFilters, filtered_rows
from storefront.search.prices import PRICE_RANGES, PriceRangeIndex
from storefront.search.query import search_prepare

__all__ = ["CatalogFilters", "FacetValue", "Facets", "product_facets"]


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
    listed: int = 0  # products the list shows under ``filters``
    # The price ranges and "in stock" read the delivered price under these terms (None:
    # the lowest item price).
    terms: DeliveredTerms | None = None

    @property
    def chosen(self) -> int:
        """How many facet values narrow the list now."""
        values = [*self.categories, *self.merchants, *self.price_ranges, self.in_stock]
        if self.ships_free is not None:
            values.append(self.ships_free)
        return sum(value.selected for value in values)


def _selected_category(filters: CatalogFilters, pk: int, slug: str) -> bool:
    return str(filters.category) in (str(pk), slug)


def _in_category(filters: CatalogFilters, pk: int, slug: str) -> bool:
    """Whether ``selectors.product_list`` keeps a product of this category under ``filters``
    (an id, as an int or digits, or else a slug)."""
    category = filters.category
    if category in (None, ""):
        return True
    if isinstance(category, int) or str(category).isdigit():
        return pk == int(category)
    return slug == category


@dataclass(frozen=True)
class _Cell:
    """Products of one category, one price range (None: nothing buyable) and shipping free
    or not: the facets are sums of these cells."""

    category_id: int
    category_slug: str
    category_name: str
    price_range: int | None
    ships_free: bool
    count: int


def _with_price(terms: DeliveredTerms | None) -> tuple[QuerySet, str]:
    """Every product with the price the price facet and "in stock" read, and its name: the
    delivered price under ``terms``, else the lowest item price."""
    if terms is None:
        return selectors.product_with_best_price_list(), "best_price"
    return products_with_delivered_price(Product.objects.all(), terms), "delivered_price"


def _cells_query(
    filters: CatalogFilters, ships_free_q: Q | None, terms: DeliveredTerms | None
) -> QuerySet:
    priced, price = _with_price(terms)
    products = selectors.product_match_list(
        products=priced,
        query=filters.query,
        merchant_id=filters.merchant_id,
    ).annotate(price_range_index=PriceRangeIndex(price))
    groups = ["category_id", "category__slug", "category__name", "price_range_index"]
    if ships_free_q is not None:
        products = products.annotate(ships_free=ExpressionWrapper(ships_free_q, BooleanField()))
        groups.append("ships_free")
    return products.order_by().values(*groups).annotate(n=Count("pk")).values_list(*groups, "n")


def _shaped_rows(
    name: str,
    query: Callable[[CatalogFilters, Q | None, DeliveredTerms | None], QuerySet],
    filters: CatalogFilters,
    ships_free_q: Q | None,
    terms: DeliveredTerms | None,
) -> list:
    """The rows of ``query(filters, ships_free_q, terms)``, from SQL compiled once per shape
    of the filters and terms (a free-shipping condition has none: it is built from the
    merchants' terms)."""
    if ships_free_q is not None:
        return list(query(filters, ships_free_q, terms))
    return filtered_rows(
        name=name,
        filters=filters,
        query=lambda chosen, chosen_terms: query(chosen, None, chosen_terms),
        terms=terms,
    )


def _cells(
    filters: CatalogFilters, ships_free_q: Q | None, terms: DeliveredTerms | None
) -> list[_Cell]:
    """One grouped query under the filters no facet leaves out (the search and the merchant):
    every other facet, the categories included, chooses among its rows in Python. At most
    categories x price ranges x 2 x 2 rows whatever the catalog's size."""
    rows = _shaped_rows("cells", _cells_query, filters, ships_free_q, terms)
    free = ships_free_q is not None
    return [
        _Cell(
            category_id=row[0],
            category_slug=row[1],
            category_name=row[2],
            price_range=row[3],
            ships_free=bool(row[4]) if free else False,
            count=row[-1],
        )
        for row in rows
    ]


class _Chosen:
    """Which cells each filter keeps, as ``product_list`` would."""

    def __init__(self, filters: CatalogFilters):
        chosen = selectors.price_range_get(key=filters.price_range)
        self.filters = filters
        self.price_range = PRICE_RANGES.index(chosen) if chosen is not None else None

    def category(self, cell: _Cell) -> bool:
        return _in_category(self.filters, cell.category_id, cell.category_slug)

    def price(self, cell: _Cell) -> bool:
        return self.price_range is None or cell.price_range == self.price_range

    def stock(self, cell: _Cell) -> bool:
        return not self.filters.available_only or cell.price_range is not None

    def free(self, cell: _Cell) -> bool:
        return not self.filters.ships_free_to or cell.ships_free


def _category_facet(
    filters: CatalogFilters, cells: list[_Cell], chosen: _Chosen
) -> tuple[FacetValue, ...]:
    counts: dict[tuple[str, int, str], int] = defaultdict(int)
    for cell in cells:
        if chosen.price(cell) and chosen.stock(cell) and chosen.free(cell):
            counts[(cell.category_name, cell.category_id, cell.category_slug)] += cell.count
    return tuple(
        FacetValue(
            key=slug,
            label=name,
            count=count,
            selected=_selected_category(filters, pk, slug),
        )
        for (name, pk, slug), count in sorted(counts.items())
    )


def _merchant_counts_query(
    filters: CatalogFilters, ships_free_q: Q | None, terms: DeliveredTerms | None
) -> QuerySet:
    offers = Offer.objects.filter(active=True)
    if replace(filters, merchant_id=None) != CatalogFilters():
        # Only the products the other filters keep; with none chosen, every product counts
        # and the subquery is left out.
        by_price = filters.available_only or filters.price_range
        priced, _ = _with_price(terms)
        products = selectors.product_match_list(
            # The price's subqueries only where it filters.
            products=priced if by_price else None,
            query=filters.query,
            category=filters.category,
            ships_free_to=filters.ships_free_to,
            ships_free_q=ships_free_q,
        )
        price_range = selectors.price_range_get(key=filters.price_range)
        if by_price and terms is not None:
            products = delivered_price_filter(
                products, available_only=filters.available_only, price_range=price_range
            )
        elif by_price:
            if filters.available_only:
                products = products.filter(Q(best_price__isnull=False))
            if price_range is not None:
                products = products.filter(price_range.q())
        offers = offers.filter(product__in=products.order_by().values("pk"))
    # Offers counted per merchant id alone (an index-only scan of the partial index on active
    # offers' merchant when nothing filters), the active merchants' names read apart: joining
    # every offer to its merchant and grouping by name cost three times as much. One active
    # offer per product and merchant (a unique constraint): counting offers counts products,
    # without COUNT(DISTINCT)'s sort.
    return (
        offers.order_by()
        .values("merchant_id")
        .annotate(n=Count("*"))  # not the id: the index holds only the merchant
        .values_list("merchant_id", "n")
    )


def _merchant_names(merchant_ids: list[int]) -> list[tuple[int, str]]:
    """Active merchants among ``merchant_ids``, by name."""

    def query(ids: tuple[int, ...]) -> QuerySet:
        return (
            Merchant.objects.filter(active=True, pk__in=ids)
            .order_by("name", "pk")
            .values_list("pk", "name")
        )

    slots = Slots()
    ids = tuple(merchant_ids)
    slots.numbers(ids)
    return shaped_list(
        key=("merchant_names", len(ids)),
        slots=slots,
        build=lambda sentinels: query(sentinels.numbers(ids)),
        plain=lambda: query(ids),
    )


def _merchant_facet(
    filters: CatalogFilters, ships_free_q: Q | None, terms: DeliveredTerms | None
) -> tuple[FacetValue, ...]:
    counts = dict(
        _shaped_rows("merchant_counts", _merchant_counts_query, filters, ships_free_q, terms)
    )
    rows = [(pk, name, counts[pk]) for pk, name in _merchant_names(list(counts)) if counts.get(pk)]
    return tuple(
        FacetValue(
            key=str(pk),
            label=name,
            count=n,
            selected=pk == filters.merchant_id,
        )
        for pk, name, n in rows
    )


def product_facets(
    *, filters: CatalogFilters, postal_code: str = "", terms: DeliveredTerms | None = None
) -> Facets:
    """Counts for every facet of the catalog under ``filters``; "ships free" is offered
    for ``postal_code`` (the shopper's destination) when there is one. With ``terms``
    (``delivered_terms_read``) the price ranges and "in stock" read each product's delivered
    price, as the shop's listing does; without, its lowest item price (the API's). A bounded
    number of queries whatever the catalog's size: the search's preparation (none when ``filters``
    carry a ``PreparedSearch``), the merchants' terms for the destination (two), one grouped
    count for the categories, price ranges, in-stock and ships-free, and two for the
    merchants (counts, names). ``Facets.listed`` is how many products the list itself shows."""
    selectors.price_range_get(key=filters.price_range)  # an unknown range is refused
    if isinstance(filters.query, str) and filters.query.strip():
        filters = replace(filters, query=search_prepare(filters.query))
    ships_free_q = selectors.product_ships_free_q(postal_code=postal_code) if postal_code else None
    filters = replace(filters, ships_free_to=postal_code if filters.ships_free_to else "")
    cells = _cells(filters, ships_free_q, terms)
    chosen = _Chosen(filters)
    cells = [cell for cell in cells if cell.count]
    in_category = [cell for cell in cells if chosen.category(cell)]
    range_counts = [0] * len(PRICE_RANGES)
    in_stock = ships_free_count = listed = 0
    for cell in in_category:
        price, stock, free = chosen.price(cell), chosen.stock(cell), chosen.free(cell)
        if cell.price_range is not None and stock and free:
            range_counts[cell.price_range] += cell.count
        if cell.price_range is not None and price and free:
            in_stock += cell.count
        if cell.ships_free and price and stock:
            ships_free_count += cell.count
        if price and stock and free:
            listed += cell.count
    ships_free = None
    if ships_free_q is not None:
        ships_free = FacetValue(
            key="1",
            label=f"Ships free to {postal_code}",
            count=ships_free_count,
            selected=bool(filters.ships_free_to),
        )
    return Facets(
        categories=_category_facet(filters, cells, chosen),
        merchants=_merchant_facet(filters, ships_free_q, terms),
        price_ranges=tuple(
            FacetValue(
                key=r.key,
                label=r.label,
                count=count,
                selected=r.key == filters.price_range,
            )
            for r, count in zip(PRICE_RANGES, range_counts, strict=True)
        ),
        in_stock=FacetValue(
            key="1", label="In stock", count=in_stock, selected=filters.available_only
        ),
        ships_free=ships_free,
        postal_code=postal_code,
        filters=filters,
        listed=listed,
        terms=terms,
    )
