"""Search latency on a large generated catalog (``manage.py bench_search``, PostgreSQL).

The catalog is the demo's (categories, merchants, zones from ``catalog_seed``) with products
and offers written by ``COPY``: 100,000 products with their offers load in well under a
minute. Names, brands and descriptions use the demo's vocabulary, so ordinary queries hit
realistic shares of the catalog (a kind: ~1%, a colour: ~10%).
"""

import random
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from django.db import connection, transaction

from storefront.catalog.cheapest import catalog_cheapest_recompute
from storefront.catalog.selectors import product_list
from storefront.demo.catalog import CATALOG, DEMO_DESTINATION, catalog_seed
from storefront.models import Category, Merchant, Offer, Product
from storefront.search import search_prepare
from storefront.search.cards import products_cheapest_delivered
from storefront.search.delivered import delivered_terms_read
from storefront.search.facets import CatalogFilters, product_facets
from storefront.search.listing import product_list_window
from storefront.validators import gtin_check_digit

PAGE = 24


@dataclass(frozen=True)
class Timing:
    label: str
    query: str
    p50_ms: float
    p95_ms: float
    results: int


def _gtin(number: int) -> str:
    payload = f"2{number:011d}"  # GS1 prefix 2: restricted circulation, never a real product
    return payload + str(gtin_check_digit(payload))


def _copy(table: str, columns: list[str], rows: Iterator[tuple]) -> None:
    """``COPY ... FROM STDIN`` through psycopg 3: rows stream without one INSERT each."""
    with (
        connection.cursor() as cursor,
        cursor.cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy,
    ):
        for row in rows:
            copy.write_row(row)


@transaction.atomic
def bench_catalog_build(*, products: int, merchants: int, seed: int) -> tuple[int, int]:
    """Writes the large catalog into an empty one; returns (products, offers)."""
    catalog_seed(seed=seed, merchants=merchants, products=0)
    rng = random.Random(seed)
    categories = {c.name: c.pk for c in Category.objects.all()}
    merchant_rows = list(Merchant.objects.values_list("pk", "slug"))
    now = time.strftime("%Y-%m-%d %H:%M:%S+00")

    def product_rows():
        for number in range(products):
            category = rng.choice(list(CATALOG))
            department = CATALOG[category]
            kind = rng.choice(department.kinds)
            brand = rng.choice(department.brands)
            variant = rng.choice(department.variants)
            name = department.name_format.format(
                brand=brand, noun=f"{kind.noun} {number}", variant=variant
            )
            gtin = _gtin(number)
            description = f"{kind.blurb} {variant} {kind.noun.lower()} by {brand}."
            yield (
                gtin, name, f"bench-{gtin}", brand, categories[category], description, "", now,
                now, kind.low, kind.high,
            )  # fmt: skip

    prices: dict[str, tuple[int, int]] = {}

    def remember(rows):
        for row in rows:
            prices[row[0]] = (row[9], row[10])
            yield row[:9]

    _copy(
        Product._meta.db_table,
        ["gtin", "name", "slug", "brand", "category_id", "description", "image_svg",
         "created_at", "updated_at"],
        remember(product_rows()),
    )  # fmt: skip
    ids = dict(Product.objects.values_list("gtin", "pk"))

    def offer_rows():
        for gtin, (low, high) in prices.items():
            base = rng.randint(low, high)
            for merchant_id, slug in rng.sample(merchant_rows, rng.randint(2, 6)):
                stock = None if rng.random() < 0.3 else rng.choice([0, 2, 10, 100])
                price = max(99, round(base * rng.uniform(0.85, 1.25) / 10) * 10 - 1)
                sku = f"{slug[:4].upper()}-{gtin}"
                yield (ids[gtin], merchant_id, sku, price, stock, True, now, now)

    offers_before = Offer.objects.count()
    _copy(
        Offer._meta.db_table,
        ["product_id", "merchant_id", "merchant_sku", "unit_price", "stock", "active",
         "created_at", "updated_at"],
        offer_rows(),
    )  # fmt: skip
    return products, Offer.objects.count() - offers_before


def bench_catalog_prepare() -> None:
    """Stored cheapest offers (what catalog pages read) and fresh planner statistics."""
    catalog_cheapest_recompute(all_products=True)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def _measure(run: Callable[[], int], repeat: int) -> tuple[list[float], int]:
    run()  # warm: plans, caches
    samples, results = [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        results = run()
        samples.append((time.perf_counter() - started) * 1000)
    return samples, results


def _percentiles(samples: list[float]) -> tuple[float, float]:
    cuts = statistics.quantiles(samples, n=20, method="inclusive")
    return statistics.median(samples), cuts[18]


def _page(filters: CatalogFilters) -> Callable[[], int]:
    def run() -> int:
        products = product_list(**filters.kwargs())
        count = products.count()
        list(products[:PAGE])
        return count

    return run


def _facets(filters: CatalogFilters) -> Callable[[], int]:
    def run() -> int:
        facets = product_facets(filters=filters, postal_code=DEMO_DESTINATION)
        return sum(v.count for v in facets.categories)

    return run


def _delivered_page(filters: CatalogFilters, ordering: str) -> Callable[[], int]:
    """The shop's list: the destination's terms, the count and the first page by delivered
    price, and the page's cards (their cheapest delivered offers)."""

    def run() -> int:
        terms = delivered_terms_read(postal_code=DEMO_DESTINATION)
        facets = product_facets(filters=filters, postal_code=DEMO_DESTINATION, terms=terms)
        rows = product_list_window(
            filters=filters, ordering=ordering, start=0, stop=PAGE, terms=terms
        )
        products_cheapest_delivered(
            product_ids=[row.pk for row in rows], postal_code=DEMO_DESTINATION
        )
        return facets.listed

    return run


def _item_page(filters: CatalogFilters, ordering: str) -> Callable[[], int]:
    """The same page by item price (before delivered prices): facets and the first page."""

    def run() -> int:
        facets = product_facets(filters=filters, postal_code=DEMO_DESTINATION)
        product_list_window(filters=filters, ordering=ordering, start=0, stop=PAGE)
        return facets.listed

    return run


def bench_delivered_run(*, repeat: int) -> list[Timing]:
    """The catalog page's list and facets by delivered price, next to the item price's."""
    timings = []
    for label, filters in [
        ("all", CatalogFilters()),
        ("word", CatalogFilters(query="kettle")),
        ("common word", CatalogFilters(query="black")),
        ("in stock, 25-50", CatalogFilters(available_only=True, price_range="25-50")),
    ]:
        if isinstance(filters.query, str) and filters.query:
            filters = replace(filters, query=search_prepare(filters.query))
        for name, run in [
            ("item price", _page_window(filters, "price")),
            ("item price + facets", _item_page(filters, "price")),
            ("delivered", _page_window(filters, "price", delivered=True)),
            ("delivered + facets + cards", _delivered_page(filters, "price")),
        ]:
            samples, results = _measure(run, repeat)
            query = str(filters.query)
            timings.append(
                Timing(f"sort price, {name}: {label}", query, *_percentiles(samples), results)
            )
    return timings


def _page_window(
    filters: CatalogFilters, ordering: str, *, delivered: bool = False
) -> Callable[[], int]:
    def run() -> int:
        terms = delivered_terms_read(postal_code=DEMO_DESTINATION) if delivered else None
        rows = product_list_window(
            filters=filters, ordering=ordering, start=0, stop=PAGE, terms=terms
        )
        return len(rows)

    return run


def bench_search_run(*, repeat: int) -> list[Timing]:
    sample = Product.objects.order_by("pk")[Product.objects.count() // 2]
    sku = Offer.objects.filter(product=sample).values_list("merchant_sku", flat=True)[0]
    queries = [
        ("word", "kettle"),
        ("word", "headphones"),
        ("two words", "coffee beans"),
        ("two words", "desk lamp"),
        ("common word", "black"),
        ("GTIN", sample.gtin),
        ("SKU", sku),
        ("typo", "ketle"),
        ("typo", "hedphones"),
    ]
    timings = []
    for label, query in queries:
        filters = CatalogFilters(query=query)
        samples, results = _measure(_page(filters), repeat)
        timings.append(Timing(f"page: {label}", query, *_percentiles(samples), results))
    for label, filters in [
        ("facets: word", CatalogFilters(query="kettle")),
        ("facets: word + in stock + ships free", CatalogFilters(
            query="headphones", available_only=True, ships_free_to=DEMO_DESTINATION)),
        ("facets: common word", CatalogFilters(query="black")),
    ]:  # fmt: skip
        samples, results = _measure(_facets(filters), repeat)
        timings.append(Timing(label, str(filters.query), *_percentiles(samples), results))
    return [*timings, *bench_delivered_run(repeat=repeat)]
