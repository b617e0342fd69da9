"""The catalog's query shapes: for any filters, the SQL kept for their shape with their values
bound is exactly what Django compiles for them afresh, and a page read through the kept SQL
is the page the plain queryset gives."""

import pytest
from django.core.exceptions import EmptyResultSet
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storefront.catalog.selectors import PRODUCT_ORDERINGS, product_list
from storefront.catalog.sql_shapes import Slots, shaped_sql
from storefront.models import Category, Merchant, Offer, Product
from storefront.search import search_prepare
from storefront.search.delivered import delivered_terms_read
from storefront.search.facets import _cells_query, _merchant_counts_query
from storefront.search.filters import CatalogFilters, filters_shape, filters_with_sentinels
from storefront.search.listing import (
    ProductListPages,
    delivered_product_list,
    product_list_window,
)

pytestmark = pytest.mark.django_db

QUERIES = ["", "kettle", "ketle", "black coffee", "for the", "GTIN", "SKU", "zzzqqq"]
PRICES = ["", "10-25", "250-"]


def _filters(demo_values, query, category, merchant, available, price) -> CatalogFilters:
    query = {"GTIN": demo_values["gtin"], "SKU": demo_values["sku"]}.get(query, query)
    category = {"slug": demo_values["slug"], "id": demo_values["category_id"]}.get(category)
    return CatalogFilters(
        query=search_prepare(query) if query else "",
        category=category,
        merchant_id=demo_values["merchant_id"] if merchant else None,
        available_only=available,
        price_range=price,
    )


@pytest.fixture
def demo_values(demo):
    offer = Offer.objects.filter(active=True).order_by("id").first()
    category = Category.objects.order_by("id").first()
    return {
        "gtin": Product.objects.order_by("id").values_list("gtin", flat=True).first(),
        "sku": offer.merchant_sku,
        "slug": category.slug,
        "category_id": category.pk,
        "merchant_id": Merchant.objects.order_by("id").values_list("id", flat=True).first(),
    }


def _kept_and_fresh(filters: CatalogFilters, query, terms=None):
    slots = Slots()
    key, _ = filters_shape(filters, slots)
    if terms is not None:
        terms.with_sentinels(slots)

    def build(sentinels):
        chosen = filters_with_sentinels(filters, sentinels)
        return query(chosen, None, None if terms is None else terms.with_sentinels(sentinels))

    kept = shaped_sql(
        key=("test", query.__name__, key, None if terms is None else terms.shape),
        slots=slots,
        build=build,
    )
    try:
        sql, params = query(filters, None, terms).query.sql_with_params()
    except EmptyResultSet:  # a search that can match nothing: no SQL at all
        return kept, None
    return kept, (sql, tuple(params))


filters_strategy = st.tuples(
    st.sampled_from(QUERIES),
    st.sampled_from([None, "slug", "id"]),
    st.booleans(),
    st.booleans(),
    st.sampled_from(PRICES),
)


@pytest.mark.slow
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(choice=filters_strategy, ordering=st.sampled_from(sorted(PRODUCT_ORDERINGS)))
def test_kept_sql_is_the_fresh_compile_and_pages_match(demo_values, choice, ordering):
    filters = _filters(demo_values, *choice)
    terms = delivered_terms_read(postal_code="10115")
    for query in (_cells_query, _merchant_counts_query):
        for chosen_terms in (None, terms):
            kept, fresh = _kept_and_fresh(filters, query, chosen_terms)
            if connection.vendor == "postgresql" or kept is not None:
                # SQLite's search puts each word into a pattern: no fixed shape, run plainly.
                assert kept == fresh
    plain = list(product_list(**filters.kwargs(), ordering=ordering))
    for start, stop in [(0, 24), (3, 7), (len(plain), len(plain) + 24)]:
        page = product_list_window(filters=filters, ordering=ordering, start=start, stop=stop)
        assert [(p.pk, p.best_price, p.best_offer_id, p.offer_count) for p in page] == [
            (p.pk, p.best_price, p.best_offer_id, p.offer_count) for p in plain[start:stop]
        ]
    # The shop's list: delivered prices under the destination's terms, kept and fresh alike.
    plain = list(delivered_product_list(filters=filters, ordering=ordering, terms=terms))
    for start, stop in [(0, 24), (3, 7), (len(plain), len(plain) + 24)]:
        page = product_list_window(
            filters=filters, ordering=ordering, start=start, stop=stop, terms=terms
        )
        assert [(p.pk, p.delivered_price) for p in page] == [
            (p.pk, p.delivered_price) for p in plain[start:stop]
        ]


def test_filters_without_a_fixed_shape_run_plainly(demo_values):
    assert filters_shape(CatalogFilters(ships_free_to="10115"), Slots()) is None
    assert filters_shape(CatalogFilters(query="kettle"), Slots()) is None  # not prepared
    pages = ProductListPages(filters=CatalogFilters(query="kettle"), ordering="relevance", count=3)
    assert [p.pk for p in pages[0:3]] == [
        p.pk for p in product_list(query="kettle", ordering="relevance")[:3]
    ]


def test_the_same_shape_for_other_values_of_the_same_kind(demo_values):
    one, two = Slots(), Slots()
    first = filters_shape(CatalogFilters(merchant_id=1, category="a-slug"), one)
    second = filters_shape(CatalogFilters(merchant_id=7, category="other"), two)
    assert first[0] == second[0] and first[1] == second[1]
    assert list(one.values.values()) == ["a-slug", 1] and list(two.values.values()) == [
        "other",
        7,
    ]
    by_id = filters_shape(CatalogFilters(merchant_id=1, category="12"), Slots())
    assert by_id[0] != first[0]  # an id compiles to another condition than a slug


@pytest.mark.slow
@pytest.mark.parametrize("query", QUERIES[1:])
def test_a_search_prepares_alike_through_kept_sql(demo_values, settings, query):
    query = {"GTIN": demo_values["gtin"], "SKU": demo_values["sku"]}.get(query, query)
    kept = [search_prepare(query) for _ in range(2)]  # compiles, then runs the kept SQL
    settings.SQL_SHAPES = False
    assert kept == [search_prepare(query)] * 2


def _compiles_in(client, url: str) -> int:
    from unittest import mock

    from django.db.models.sql.compiler import SQLCompiler

    calls = []
    original = SQLCompiler.as_sql

    def counted(self, *args, **kwargs):
        calls.append(type(self).__name__)
        return original(self, *args, **kwargs)

    with mock.patch.object(SQLCompiler, "as_sql", counted):
        assert client.get(url).status_code == 200
    return len(calls)


# The shop's pages read the version 2 merchants' warehouses for the destination through
# ``storefront.fulfillment.selectors`` (which merchants have warehouses; their nodes and
# rates), which keep no shape yet: three small compiles, whatever the catalog's size.
WAREHOUSE_READS = 3


def test_a_repeated_catalog_page_compiles_no_sql(demo_values, client, settings):
    """After the first request of a shape, the home page renders without Django compiling a
    query of its own: the list, its delivered prices, the facets and the cards' offers and
    stock run kept SQL (PostgreSQL: the search API too, with none at all; SQLite's search
    keeps no shape)."""
    settings.PAGE_CACHE = False
    urls = {"/": WAREHOUSE_READS, f"/?category={demo_values['slug']}&page=2": WAREHOUSE_READS}
    if connection.vendor == "postgresql":
        urls |= {"/api/v1/products/?search=kettle": 0, "/api/v1/products/?search=ketle": 0}
    for url, most in urls.items():
        client.get(url)
        assert _compiles_in(client, url) <= most, url
