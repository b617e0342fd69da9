# ruff: noqa: RUF001  (the notes use the typographic minus sign the page shows)
"""The product page ranks offers by delivered cost for the shopper's postal code and cart, says
what it assumes, and never serves one shopper's ranking to another from the page cache."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from storefront.carts.delivered import DeliveredCost
from storefront.web.views.catalog import delivered_note
from tests.factories import MerchantFactory, OfferFactory, ProductFactory, ShippingZoneFactory
from tests.storefront.web.conftest import add_to_cart

pytestmark = pytest.mark.django_db

BEST = re.compile(r'<li class="offer offer--best[^"]*"[^>]*data-offer-id="(\d+)"')


@pytest.fixture
def kettle(db):
    """The reported case: Blue Trading's 57.69 pays 4.95 shipping, Coastal Market's 60.89
    ships free; Blue ships free to 10... postal codes."""
    product = ProductFactory(name="Kettle", slug="kettle")
    blue = MerchantFactory(name="Blue Trading", base_fee=495, per_extra_unit=0)
    ShippingZoneFactory(merchant=blue, postal_prefix="10", base_fee=0, per_extra_unit=0)
    coastal = MerchantFactory(name="Coastal Market", base_fee=0, per_extra_unit=0)
    return (
        product,
        OfferFactory(product=product, merchant=blue, unit_price=5769),
        OfferFactory(product=product, merchant=coastal, unit_price=6089),
    )


def product_page(client) -> str:
    response = client.get(reverse("product", args=["kettle"]))
    assert response.status_code == 200
    return response.content.decode()


def marked(html: str) -> int:
    (offer_id,) = BEST.findall(html)
    return int(offer_id)


def test_free_shipping_beats_a_lower_item_price(client, kettle):
    _, blue, coastal = kettle
    html = product_page(client)
    assert marked(html) == coastal.pk
    assert '<span class="price price--lg">€60.89</span>' in html
    assert "Delivered, from Coastal Market, with each merchant&#x27;s standard shipping" in html
    assert "€62.64</strong> delivered" in html
    assert "€57.69 + €4.95 shipping" in html
    # Cheapest delivered first.
    assert html.index(f'data-offer-id="{coastal.pk}"') < html.index(f'data-offer-id="{blue.pk}"')


def test_the_postal_code_is_said_and_used(client, kettle):
    _, blue, _ = kettle
    client.post(reverse("cart_destination"), {"postal_code": "10115"})
    html = product_page(client)
    assert marked(html) == blue.pk
    assert "with shipping to 10115" in html
    assert "€57.69, free shipping" in html


def test_a_parcel_the_cart_already_pays_for_counts(client, kettle):
    _, blue, coastal = kettle
    other = OfferFactory(merchant=blue.merchant, unit_price=1000)
    fresh = Client()
    assert marked(product_page(fresh)) == coastal.pk
    add_to_cart(client, other)
    html = product_page(client)
    assert marked(html) == blue.pk
    assert "€57.69, no extra shipping (joins your order from Blue Trading)" in html
    assert "€57.69</strong> added to your cart total" in html
    # The cached page of one cart is never another's.
    assert marked(product_page(fresh)) == coastal.pk
    assert marked(product_page(client)) == blue.pk
    # Add cheapest adds what the page marks.
    client.post(reverse("cart_add"), {"product": blue.product_id, "quantity": 1})
    assert "In your cart: 1 from Blue Trading" in product_page(client)


def cost(**fields) -> DeliveredCost:
    values = {
        "offer_id": 1,
        "merchant_id": 1,
        "unit_price": 1200,
        "quantity": 1,
        "increment": 1200,
        "eligible": True,
        "joins_cart": False,
    }
    return DeliveredCost(**{**values, **fields})


@pytest.mark.parametrize(
    ("fields", "note"),
    [
        ({"increment": 1695, "shipping_change": 495}, "€12.00 + €4.95 shipping"),
        ({}, "€12.00, free shipping"),
        ({"joins_cart": True}, "€12.00, no extra shipping (joins your order from M)"),
        (
            {"increment": 705, "shipping_change": -495, "unlocks_free_shipping": True},
            "€12.00 − €4.95: your order from M ships free",
        ),
        (
            {"increment": 1100, "joins_cart": True, "discount_change": 100},
            "€12.00, no extra shipping (joins your order from M) − €1.00 multi-buy discount",
        ),
        (
            {"increment": 700, "shipping_change": -500},
            "€12.00 − €5.00 shipping in your cart",
        ),
    ],
)
def test_delivered_note_says_how_the_figure_is_made(fields, note):
    assert delivered_note(cost(**fields), "M") == note


def test_an_offer_that_cannot_be_added_shows_no_figure(client, kettle):
    _, blue, coastal = kettle
    coastal.stock = 0
    coastal.save()
    html = product_page(client)
    assert marked(html) == blue.pk
    row = html.split(f'data-offer-id="{coastal.pk}"')[1].split("</li>")[0]
    assert "Sold out" in row and 'data-testid="delivered"' not in row
