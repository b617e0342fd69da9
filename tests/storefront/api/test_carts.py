import pytest
from django.conf import settings
from django.middleware.csrf import get_token
from django.test import Client, RequestFactory

from storefront.models import MAX_LINE_QUANTITY, CartLine
from tests.carts import cart_with_choices
from tests.factories import CartLineFactory, OfferFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_cart_get_before_any_is_404_and_post_creates(alice_api):
    assert alice_api.get("/api/v1/cart/").json()["error"]["code"] == "cart_not_found"
    created = alice_api.post("/api/v1/cart/")
    assert created.status_code == 201
    assert created.json()["lines"] == [] and created.json()["total"] == 0
    again = alice_api.post("/api/v1/cart/")
    assert again.status_code == 200 and again.json()["id"] == created.json()["id"]


def test_cart_shows_lines_groups_and_totals(alice_api, cart):
    body = alice_api.get("/api/v1/cart/").json()
    assert len(body["lines"]) == 3
    assert body["merchants"][0]["merchant_name"] == "Dear Shop"
    # 3 x 25.00 plus 4.99 + 2 x 1.00 shipping.
    assert body["total"] == 7500 + 499 + 200
    assert body["currency"]
    line = body["lines"][0]
    assert line["available"] is True and line["problem"] is None


def test_add_line_creates_cart_then_grows_line(alice_api):
    offer = OfferFactory(unit_price=1234, stock=5)
    first = alice_api.post("/api/v1/cart/lines/", {"offer_id": offer.pk}, format="json")
    assert first.status_code == 201, first.json()
    assert first.json()["lines"][0]["quantity"] == 1
    second = alice_api.post(
        "/api/v1/cart/lines/", {"offer_id": offer.pk, "quantity": 3}, format="json"
    )
    assert second.json()["lines"][0]["quantity"] == 4
    assert second.json()["version"] == first.json()["version"] + 1


@pytest.mark.parametrize(
    ("payload", "field", "code"),
    [
        ({"offer_id": 999999}, "offer_id", "offer_not_found"),
        ({}, "offer_id", "required"),
        ({"offer_id": "abc"}, "offer_id", "invalid"),
        ({"offer_id": None}, "offer_id", "null"),
        ({"offer_id": "OFFER", "quantity": 1}, "offer_id", "invalid"),
        ({"offer_id": 1, "quantity": 0}, "quantity", "min_value"),
        ({"offer_id": 1, "quantity": -3}, "quantity", "min_value"),
        ({"offer_id": 1, "quantity": MAX_LINE_QUANTITY + 1}, "quantity", "max_value"),
        ({"offer_id": 1, "quantity": 10**40}, "quantity", "max_value"),
        ({"offer_id": 1, "quantity": 1.5}, "quantity", "invalid"),
    ],
)
def test_add_line_bad_input_is_400(alice_api, payload, field, code):
    response = alice_api.post("/api/v1/cart/lines/", payload, format="json")
    assert response.status_code == 400, response.json()
    assert response.json() == {
        "error": {"code": code, "message": response.json()["error"]["message"], "field": field}
    }
    assert response.json()["error"]["message"]


def test_malformed_json_is_400_parse_error(alice_api):
    response = alice_api.post(
        "/api/v1/cart/lines/", data='{"offer_id": 1,', content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"
    assert response.json()["error"]["field"] is None


def test_json_that_is_not_an_object_is_400(alice_api):
    response = alice_api.post("/api/v1/cart/lines/", data="[1, 2]", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"


def test_unsupported_media_type_is_415(alice_api):
    response = alice_api.post("/api/v1/cart/lines/", data="offer_id=1", content_type="text/plain")
    assert response.status_code == 415
    assert response.json()["error"]["code"] == "unsupported_media_type"


def test_sold_out_offer_is_409(alice_api):
    offer = OfferFactory(stock=2)
    response = alice_api.post(
        "/api/v1/cart/lines/", {"offer_id": offer.pk, "quantity": 3}, format="json"
    )
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "insufficient_stock"


def test_inactive_offer_is_409(alice_api):
    offer = OfferFactory(active=False)
    response = alice_api.post("/api/v1/cart/lines/", {"offer_id": offer.pk}, format="json")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "offer_inactive"


def test_set_quantity_and_remove(alice_api, cart):
    line = CartLine.objects.filter(cart=cart).first()
    url = f"/api/v1/cart/lines/{line.pk}/"
    patched = alice_api.patch(url, {"quantity": 7}, format="json")
    assert patched.status_code == 200
    assert next(item for item in patched.json()["lines"] if item["id"] == line.pk)["quantity"] == 7
    for bad in (0, MAX_LINE_QUANTITY + 1, "many"):
        assert alice_api.patch(url, {"quantity": bad}, format="json").status_code == 400
    assert alice_api.delete(url).status_code == 204
    assert not CartLine.objects.filter(pk=line.pk).exists()
    assert alice_api.delete(url).json()["error"]["code"] == "cart_line_not_found"


def test_other_users_lines_are_404_and_untouched(alice_api, cart):
    bob_cart = cart_with_choices(owner=UserFactory(username="bob"))
    bob_line = CartLine.objects.filter(cart=bob_cart).first()
    url = f"/api/v1/cart/lines/{bob_line.pk}/"
    assert alice_api.patch(url, {"quantity": 5}, format="json").status_code == 404
    assert alice_api.delete(url).status_code == 404
    bob_line.refresh_from_db()
    assert bob_line.quantity == 1


def test_unknown_line_is_404(alice_api, cart):
    response = alice_api.patch("/api/v1/cart/lines/987654/", {"quantity": 2}, format="json")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "cart_line_not_found"


def test_destination_set_normalises_and_validates(alice_api, cart):
    url = "/api/v1/cart/destination/"
    response = alice_api.put(url, {"postal_code": " sw1a 1aa "}, format="json")
    assert response.status_code == 200
    assert response.json()["postal_code"] == "SW1A 1AA"
    bad = alice_api.put("/api/v1/cart/destination/", {"postal_code": "!!"}, format="json")
    assert bad.status_code == 400
    assert bad.json()["error"]["field"] == "postal_code"
    cleared = alice_api.put("/api/v1/cart/destination/", {"postal_code": None}, format="json")
    assert cleared.json()["postal_code"] == ""


def test_cart_needs_auth(api):
    response = api.get("/api/v1/cart/")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
    assert response["WWW-Authenticate"].startswith("Token")


def test_session_auth_enforces_csrf(shopper):
    CartLineFactory(cart__owner=shopper)
    client = Client(enforce_csrf_checks=True)
    client.force_login(shopper)
    assert client.get("/api/v1/cart/").status_code == 200
    refused = client.post("/api/v1/cart/optimizations/", {}, content_type="application/json")
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "permission_denied"
    assert "CSRF" in refused.json()["error"]["message"]
    # A browser holds the CSRF cookie from a page and echoes its token in a header.
    page_request = RequestFactory().get("/")
    token = get_token(page_request)
    client.cookies[settings.CSRF_COOKIE_NAME] = page_request.META["CSRF_COOKIE"]
    accepted = client.post(
        "/api/v1/cart/optimizations/", {}, content_type="application/json", HTTP_X_CSRFTOKEN=token
    )
    assert accepted.status_code == 201, accepted.json()
