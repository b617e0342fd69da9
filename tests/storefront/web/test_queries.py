"""The shopper pages run a fixed number of queries whatever the size of what they show."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.factories import MerchantFactory, OfferFactory, ProductFactory
from tests.storefront.web.conftest import add_to_cart

pytestmark = pytest.mark.django_db


def queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def test_catalog_queries_do_not_grow_with_products(client, market):
    few = queries(client, reverse("catalog"))
    for index in range(15):
        OfferFactory(product=ProductFactory(name=f"Extra {index}"), merchant=market.bundle)
    assert queries(client, reverse("catalog")) == few


def test_product_queries_do_not_grow_with_offers(client, market):
    product = market.products[0]
    url = reverse("product", args=[product.slug])
    add_to_cart(client, market.dear_offers[0])
    few = queries(client, url)
    for _ in range(10):
        OfferFactory(product=product, merchant=MerchantFactory())
    assert queries(client, url) == few


def test_cart_queries_do_not_grow_with_lines_or_merchants(client, market):
    add_to_cart(client, market.dear_offers[0])
    client.post(reverse("cart_improve"))
    few = queries(client, reverse("cart"))
    for _ in range(6):
        add_to_cart(client, OfferFactory(merchant=MerchantFactory()))
    add_to_cart(client, market.bundle_offers[1])
    add_to_cart(client, market.cheap_offers[2])
    client.post(reverse("cart_improve"))
    assert queries(client, reverse("cart")) == few
