"""ETag / If-Match / If-None-Match on the cart API (``storefront.carts.etag``): two devices
editing one cart cannot overwrite each other's edits silently."""

import pytest

from storefront.models import CartLine
from tests.factories import OfferFactory

pytestmark = pytest.mark.django_db


def test_get_has_an_etag_and_if_none_match_answers_304(alice_api, cart):
    first = alice_api.get("/api/v1/cart/")
    etag = first["ETag"]
    assert etag.startswith(f'"{cart.version}-')
    unchanged = alice_api.get("/api/v1/cart/", HTTP_IF_NONE_MATCH=etag)
    assert unchanged.status_code == 304
    assert unchanged["ETag"] == etag


def test_a_write_with_a_stale_if_match_is_412_with_the_current_cart(alice_api, cart):
    etag = alice_api.get("/api/v1/cart/")["ETag"]
    line = cart.lines.first()
    # Another device changes the cart.
    moved = alice_api.patch(f"/api/v1/cart/lines/{line.pk}/", {"quantity": 2}, format="json")
    assert moved.status_code == 200
    current_etag = moved["ETag"]
    assert current_etag != etag

    stale = alice_api.patch(
        f"/api/v1/cart/lines/{line.pk}/", {"quantity": 5}, format="json", HTTP_IF_MATCH=etag
    )
    assert stale.status_code == 412
    assert stale.json()["error"]["code"] == "precondition_failed"
    assert stale.json()["cart"] == moved.json()
    assert stale["ETag"] == current_etag
    assert CartLine.objects.get(pk=line.pk).quantity == 2

    offer = OfferFactory(stock=10)
    refused = alice_api.post(
        "/api/v1/cart/lines/",
        {"offer_id": offer.pk, "quantity": 1},
        format="json",
        HTTP_IF_MATCH=etag,
    )
    assert refused.status_code == 412
    assert alice_api.delete(f"/api/v1/cart/lines/{line.pk}/", HTTP_IF_MATCH=etag).status_code == 412
    assert (
        alice_api.put(
            "/api/v1/cart/destination/",
            {"postal_code": "10115"},
            format="json",
            HTTP_IF_MATCH=etag,
        ).status_code
        == 412
    )
    assert not CartLine.objects.filter(offer=offer).exists()


def test_a_write_with_the_current_etag_goes_through(alice_api, cart):
    etag = alice_api.get("/api/v1/cart/")["ETag"]
    line = cart.lines.first()
    response = alice_api.patch(
        f"/api/v1/cart/lines/{line.pk}/", {"quantity": 3}, format="json", HTTP_IF_MATCH=etag
    )
    assert response.status_code == 200
    assert response["ETag"] != etag
    deleted = alice_api.delete(f"/api/v1/cart/lines/{line.pk}/", HTTP_IF_MATCH=response["ETag"])
    assert deleted.status_code == 204
    assert deleted["ETag"] == alice_api.get("/api/v1/cart/")["ETag"]


def test_if_match_without_a_cart_is_412(alice_api, shopper):
    offer = OfferFactory()
    response = alice_api.post(
        "/api/v1/cart/lines/",
        {"offer_id": offer.pk, "quantity": 1},
        format="json",
        HTTP_IF_MATCH='"1-abc"',
    )
    assert response.status_code == 412
    assert response.json()["error"]["code"] == "precondition_failed"
