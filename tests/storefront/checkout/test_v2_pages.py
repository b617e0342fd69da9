"""The shopper's pages on pricing contract version 2, without JavaScript: the cart, the
one-page checkout and the order show each merchant's parcels per warehouse."""

import re

import pytest
from django.urls import reverse

from storefront.models import Cart, Order
from tests.storefront.carts.v2_market import POSTAL_CODE, v2_market

pytestmark = pytest.mark.django_db

ADDRESS = {
    "email": "guest@example.com",
    "full_name": "Grace Hopper",
    "address_line": "Arlington Rd 1",
    "city": "Berlin",
    "postal_code": POSTAL_CODE,
    "country": "DE",
}


def _parcels(html: str) -> list[str]:
    return [
        re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", item)).strip()
        for item in re.findall(r'<li data-testid="parcel"[^>]*>(.*?)</li>', html, re.S)
    ]


@pytest.fixture
def market(db):
    return v2_market()


@pytest.fixture
def cart(client, market):
    client.post(reverse("cart_destination"), {"postal_code": POSTAL_CODE})
    for offer, quantity in ((market.monitor, 1), (market.kettle, 1), (market.mug, 2)):
        client.post(reverse("cart_add"), {"offer": offer.pk, "quantity": quantity})
    return Cart.objects.get(session_key=client.session.session_key)


HAMBURG = "Ships from Hamburg · 2 items · 6.2 kg · €7.99"
MUNICH = "Ships from Munich · 2 items · 0.6 kg · €3.99"


def test_the_cart_page_shows_a_parcel_per_warehouse(client, cart):
    html = client.get(reverse("cart")).content.decode()
    assert _parcels(html) == [HAMBURG, MUNICH]
    assert "ships from Hamburg" in html and "ships from Munich" in html


def test_free_shipping_says_free_on_each_parcel(client, cart, market):
    market.acme.free_over = 10000
    market.acme.save()
    html = client.get(reverse("cart")).content.decode()
    assert [p.rsplit(" · ", 1)[1] for p in _parcels(html)] == ["free shipping"] * 2


def test_checkout_summary_and_order_page_show_the_parcels(client, cart):
    page = client.get(reverse("checkout"))
    html = page.content.decode()
    assert _parcels(html) == [HAMBURG, MUNICH]
    form = dict(re.findall(r'name="(review_token|idempotency_key)" value="([^"]+)"', html))
    placed = client.post(reverse("checkout"), {**ADDRESS, **form})
    assert placed.status_code == 302, placed.content.decode()[:2000]
    order = Order.objects.get()
    assert order.total == 15000 + 2000 + 1000 + 799 + 399
    detail = client.get(reverse("order_detail", args=[order.number]))
    assert _parcels(detail.content.decode()) == [HAMBURG, MUNICH]


def test_a_v1_cart_shows_no_parcels(client, market):
    client.post(reverse("cart_add"), {"offer": market.kettle_bolt.pk})
    client.post(reverse("cart_destination"), {"postal_code": POSTAL_CODE})
    html = client.get(reverse("cart")).content.decode()
    assert _parcels(html) == [] and 'data-testid="parcels"' not in html
