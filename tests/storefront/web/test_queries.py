"""The shopper pages run a fixed number of queries whatever the size of what they show."""

import pytest
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.factories import MerchantFactory, OfferFactory, ProductFactory
from tests.storefront.web.conftest import add_to_cart

pytestmark = pytest.mark.django_db


def queries(client, url: str) -> int:
    """Queries of a page once warm: the first request after a zone or merchant change also
    rebuilds this process's zone index (two queries, once, not per page)."""
    assert client.get(url).status_code == 200
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def test_catalog_queries_do_not_grow_with_products(client, market):
    few = queries(client, reverse("catalog"))
    for index in range(15):
        OfferFactory(product=ProductFactory(name=f"Extra {index}"), merchant=market.bundle)
    assert queries(client, reverse("catalog")) == few


def test_product_queries_do_not_grow_with_offers(
    client, market, django_capture_on_commit_callbacks
):
    product = market.products[0]
    url = reverse("product", args=[product.slug])
    add_to_cart(client, market.dear_offers[0])
    few = queries(client, url)
    # Committed merchants replace the zone index's stamp (the test transaction never commits).
    with django_capture_on_commit_callbacks(execute=True):
        for _ in range(10):
            OfferFactory(product=product, merchant=MerchantFactory())
    assert queries(client, url) == few


def test_cart_queries_do_not_grow_with_lines_or_merchants(
    client, market, django_capture_on_commit_callbacks
):
    add_to_cart(client, market.dear_offers[0])
    client.post(reverse("cart_improve"))
    few = queries(client, reverse("cart"))
    with django_capture_on_commit_callbacks(execute=True):
        merchants = MerchantFactory.create_batch(6)
    for merchant in merchants:
        add_to_cart(client, OfferFactory(merchant=merchant))
    add_to_cart(client, market.bundle_offers[1])
    add_to_cart(client, market.cheap_offers[2])
    client.post(reverse("cart_improve"))
    assert queries(client, reverse("cart")) == few


@override_settings(PAGE_CACHE=False)
@pytest.mark.parametrize(
    ("path", "most"),
    [
        # Categories (the filter form), the active merchants and which ship from warehouses
        # (their terms for the delivered price), one grouped count for the categories, price
        # ranges, in-stock and the list's own count, the merchants' counts and names, the page
        # of products, their offers.
        ("/", 8),
        ("/?q=gadget&in_stock=on&price=25-50&sort=price", 10),  # + the search's preparation
        # The product, its buyable offers (the best one, their count), its offers with
        # their merchants: three plain queries cost less than compiling one with the
        # catalog's stored-or-live best-offer annotations.
        # + which of its merchants ship from warehouses (three more when some do).
        ("product", 4),
        # The search's preparation (exact codes; does it match as typed), the grouped
        # count, the merchants' counts and names, the page.
        ("/api/v1/products/?search=gadget", 6),
    ],
)
def test_uncached_renders_run_a_fixed_few_queries(
    market, path, most, django_assert_max_num_queries
):
    """A first-time visitor's uncached render (nothing of their own: no session, no cart)
    of the home page, a search, a product page and the product search API."""
    if path == "product":
        path = reverse("product", args=[market.products[0].slug])
    client = Client()
    assert client.get(path).status_code == 200  # this process's zone index, once
    with django_assert_max_num_queries(most) as captured:
        assert client.get(path).status_code == 200
    # The same count with ten more products, each with offers.
    # From merchants the zone index knows (the test's transaction never commits new ones).
    for index in range(10):
        product = ProductFactory(name=f"Gadget extra {index}")
        OfferFactory(product=product, merchant=market.bundle, unit_price=2500)
        OfferFactory(product=product, merchant=market.dear, unit_price=2600)
    with CaptureQueriesContext(connection) as more:
        assert client.get(path).status_code == 200
    assert len(more) == len(captured)
