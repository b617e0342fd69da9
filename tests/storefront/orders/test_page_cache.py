"""An order takes stock: the product page, served from the shared page cache, shows the stock
left at once."""

import pytest
from django.test import Client
from django.urls import reverse

from tests.storefront.orders.conftest import place

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
