"""The shopper pages run a fixed number of queries whatever the size of what they show."""

import pytest
from django.db import connection
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
