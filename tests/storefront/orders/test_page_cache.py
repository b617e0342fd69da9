"""An order takes stock: the product page, served from the shared page cache, shows the stock
left at once."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from storefront.models import Offer, Order, OrderLine
from tests.storefront.orders.conftest import POSTAL_CODE, place
from tests.storefront.orders.test_web import ADDRESS
from tests.storefront.web.conftest import add_to_cart, market  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db


def test_an_order_shows_the_stock_left_on_the_product_page(
    two_merchant_cart, django_capture_on_commit_callbacks
):
    line = two_merchant_cart.lines.select_related("offer__product").get(offer__stock=5)
    url = reverse("product", args=[line.offer.product.slug])
    assert "Only 5 left" in Client().get(url).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        place(two_merchant_cart)
    assert "Only 3 left" in Client().get(url).content.decode()


def test_checkout_and_the_order_price_live_never_from_the_page_cache(client, market):  # noqa: F811
    """A price written with no version bump (the worst case: a stale page cache) is the one
    the checkout review and the placed order use."""
    offer = market.cheap_offers[0]
    add_to_cart(client, offer)
    client.post(reverse("cart_destination"), {"postal_code": POSTAL_CODE})
    product_url = reverse("product", args=[offer.product.slug])
    # A visitor with no cart of their own gets the shared cached page; the shopper's own
    # product page follows their cart's live prices.
    visitor = Client()
    assert "€22.00" in visitor.get(product_url).content.decode()
    Offer.objects.filter(pk=offer.pk).update(unit_price=2050)  # no signal, no bump
    assert "€22.00" in visitor.get(product_url).content.decode()  # the cached page
    assert client.post(reverse("checkout"), ADDRESS).status_code == 302
    review = client.get(reverse("checkout_review"))
    assert "€20.50" in review.content.decode()
    place_form = {
        name: re.search(rf'name="{name}" value="([^"]+)"', review.content.decode()).group(1)
        for name in ("review_token", "idempotency_key")
    }
    assert client.post(reverse("checkout_place"), place_form).status_code == 302
    assert OrderLine.objects.get(merchant_order__order=Order.objects.get()).unit_price == 2050
