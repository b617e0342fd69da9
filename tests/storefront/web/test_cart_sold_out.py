"""A cart line whose offer sold out says so (never "Only 0 left"), names the seller that
would cost least delivered instead, and the page's count agrees with the header badge."""

import re

import pytest
from django.urls import reverse

from storefront.models import Offer
from tests.storefront.web.conftest import add_to_cart

pytestmark = pytest.mark.django_db


def cart_page(client) -> str:
    response = client.get(reverse("cart"))
    assert response.status_code == 200
    return response.content.decode()


def badge(html: str) -> str:
    match = re.search(r'data-testid="cart-units">(.*?)</span></span>', html, re.S)
    assert match
    return re.sub(r"<[^>]+>", "", match.group(1)).replace(",", "").split()[0]


def test_a_sold_out_line_says_sold_out_and_names_another_seller(client, market):
    offer = market.cheap_offers[0]
    add_to_cart(client, offer)
    Offer.objects.filter(pk=offer.pk).update(stock=0)
    html = cart_page(client)
    assert "Only 0 left" not in html
    assert "Sold out at Cheap Shop." in html
    # 23.00 + 5.99 at the bundle shop beats 25.00 + 4.99 at the dear shop.
    assert (
        "Bundle Shop has 1 at €23.00 each "
        "(your total +€28.99 with shipping and discounts; 1 other seller too)." in html
    )
    assert "Compare sellers" in html


def test_the_count_agrees_with_the_badge(client, market):
    add_to_cart(client, market.dear_offers[1], 2)
    offer = market.cheap_offers[0]
    add_to_cart(client, offer)
    Offer.objects.filter(pk=offer.pk).update(stock=0)
    html = cart_page(client)
    assert badge(html) == "3"
    assert "3 items from 1 merchant · 1 not available right now" in html


def test_short_stock_still_says_how_many_are_left(client, market):
    offer = market.cheap_offers[0]
    add_to_cart(client, offer, 3)
    Offer.objects.filter(pk=offer.pk).update(stock=2)
    html = cart_page(client)
    assert "Only 2 left at Cheap Shop: lower the quantity or choose another seller." in html
    assert "Bundle Shop has 3 at €23.00 each" in html


def test_no_other_seller_is_said_plainly(client, market):
    offer = market.cheap_offers[2]
    add_to_cart(client, offer)
    Offer.objects.filter(pk=offer.pk).update(stock=0)
    Offer.objects.filter(product=offer.product).exclude(pk=offer.pk).update(active=False)
    html = cart_page(client)
    assert "Sold out at Cheap Shop." in html
    assert "No other seller has 1 right now." in html
