"""The cart's summary counts parcels where a merchant ships several ("Shipping (1 merchant,
2 parcels)"), the checkout summary says so too, and both count what the cart API lists."""

import re

import pytest
from django.urls import reverse

from storefront.carts.pricing_summary import cart_pricing_summary
from storefront.models import Cart
from tests.factories import UserFactory
from tests.storefront.carts.v2_market import POSTAL_CODE, v2_market

pytestmark = pytest.mark.django_db


def _text(html: str, testid: str) -> str:
    found = re.search(rf'data-testid="{testid}"[^>]*>(.*?)</', html, re.S)
    assert found, testid
    return re.sub(r"\s+", " ", found.group(1)).strip()


def _checkout_count(html: str) -> str:
    found = re.search(r"items? in \d+ packages?, one per merchant[^<]*", html)
    assert found
    return found.group(0)


@pytest.fixture
def market():
    return v2_market()


def _fill(client, lines) -> Cart:
    client.post(reverse("cart_destination"), {"postal_code": POSTAL_CODE})
    for offer, quantity in lines:
        client.post(reverse("cart_add"), {"offer": offer.pk, "quantity": quantity})
    return Cart.objects.get(session_key=client.session.session_key)


def test_a_merchant_shipping_two_parcels_is_counted(client, market):
    # The monitor ships from Hamburg, the mug from Munich: Acme sends two parcels.
    cart = _fill(client, [(market.monitor, 1), (market.mug, 1), (market.kettle_bolt, 1)])
    html = client.get(reverse("cart")).content.decode()
    assert _text(html, "shipping-label") == "Shipping (2 merchants, 3 parcels)"
    assert cart_pricing_summary(cart=cart).parcel_count == 3
    checkout = client.get(reverse("checkout")).content.decode()
    assert _checkout_count(checkout) == (
        "items in 2 packages, one per merchant, sent as 3 parcels (one per warehouse)."
    )


def test_one_parcel_per_merchant_says_merchants_only(client, market):
    _fill(client, [(market.monitor, 1), (market.kettle_bolt, 1)])
    html = client.get(reverse("cart")).content.decode()
    assert _text(html, "shipping-label") == "Shipping (2 merchants)"
    checkout = client.get(reverse("checkout")).content.decode()
    assert _checkout_count(checkout) == "items in 2 packages, one per merchant."


def test_a_single_merchant_with_two_parcels(client, market):
    _fill(client, [(market.monitor, 1), (market.mug, 2)])
    html = client.get(reverse("cart")).content.decode()
    assert _text(html, "shipping-label") == "Shipping (1 merchant, 2 parcels)"


def test_the_page_counts_the_parcels_the_api_lists(market):
    from rest_framework.test import APIClient

    user = UserFactory()
    api = APIClient()
    api.force_authenticate(user)
    api.put("/api/v1/cart/destination/", {"postal_code": POSTAL_CODE}, format="json")
    for offer in (market.monitor, market.mug, market.kettle_bolt):
        response = api.post("/api/v1/cart/lines/", {"offer_id": offer.pk}, format="json")
        assert response.status_code == 201, response.content
    body = api.get("/api/v1/cart/").json()
    listed = sum(len(merchant["parcels"]) for merchant in body["merchants"])
    cart = Cart.objects.get(owner=user)
    assert listed == cart_pricing_summary(cart=cart).parcel_count == 3
    # The v1 merchant's one parcel is listed too (no warehouse): one parcel a merchant.
    bolt = next(m for m in body["merchants"] if m["merchant_name"] == "Bolt")
    assert [parcel["warehouse_id"] for parcel in bolt["parcels"]] == [None]
