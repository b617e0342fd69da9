import pytest
from rest_framework.test import APIClient

from storefront.catalog.services import offer_update
from storefront.models import Cart, Offer, Order
from tests.factories import MerchantFactory, OfferFactory, UserFactory

pytestmark = pytest.mark.django_db

ADDRESS = {
    "email": "mo@example.com",
    "full_name": "Mo Bile",
    "address_line": "Appstr. 2",
    "city": "Berlin",
    "postal_code": "10115",
    "country": "DE",
}
PAID = {"status": "confirmed", "fraud_status": "accept", "gateway_response": "3ds-disabled"}


@pytest.fixture
def api(db):
    client = APIClient()
    client.force_authenticate(UserFactory())
    return client


def _fill_cart(api) -> Offer:
    """Through the API only: create the cart, add two merchants' offers."""
    offers = [OfferFactory(stock=4, unit_price=1500), OfferFactory(merchant=MerchantFactory())]
    assert api.post("/api/v1/cart/").status_code == 201
    for offer in offers:
        response = api.post(
            "/api/v1/cart/lines/", {"offer_id": offer.pk, "quantity": 2}, format="json"
        )
        assert response.status_code == 201, response.json()
    return offers[0]


def _review(api) -> dict:
    response = api.post("/api/v1/checkout/review/", {"postal_code": "10115"}, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def _place(api, token, key="mobile-key-0001", **overrides):
    return api.post(
        "/api/v1/orders/",
        {**ADDRESS, "review_token": token, **overrides},
        format="json",
        HTTP_IDEMPOTENCY_KEY=key,
    )


def test_empty_cart_to_paid_order_with_the_api_only(api):
    limited = _fill_cart(api)
    review = _review(api)
    assert len(review["cart"]["merchants"]) == 2
    placed = _place(api, review["review_token"])
    assert placed.status_code == 201, placed.json()
    order = placed.json()
    assert order["status"] == "pending"
    assert order["total"] == review["cart"]["total"]
    assert sum(package["cost"] for package in order["packages"]) == order["total"]
    paid = api.post(f"/api/v1/orders/{order['number']}/payment/", PAID, format="json")
    assert paid.status_code == 200, paid.json()
    assert paid.json()["status"] == "paid"
    assert Offer.objects.get(pk=limited.pk).stock == 2
    listed = api.get("/api/v1/orders/").json()
    assert [row["number"] for row in listed] == [order["number"]]
    assert api.get(f"/api/v1/orders/{order['number']}/").json()["status"] == "paid"


def test_a_retried_post_with_the_same_key_returns_the_same_order(api):
    _fill_cart(api)
    token = _review(api)["review_token"]
    first, again = _place(api, token), _place(api, token)
    assert first.json()["number"] == again.json()["number"]
    assert Order.objects.count() == 1


def test_stale_review_is_a_409_with_the_changes_and_the_new_total(api):
    limited = _fill_cart(api)
    token = _review(api)["review_token"]
    offer_update(offer=limited, unit_price=1600)
    response = _place(api, token)
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "checkout_changed"
    assert error["details"]["total"] == api.get("/api/v1/cart/").json()["total"]
    assert "price_changed" in {change["code"] for change in error["details"]["changes"]}
    assert Order.objects.count() == 0
    assert Offer.objects.get(pk=limited.pk).stock == 4


def test_the_last_unit_sold_after_the_review_is_a_409_naming_the_line(api):
    limited = _fill_cart(api)
    token = _review(api)["review_token"]
    Offer.objects.filter(pk=limited.pk).update(stock=1)  # another shopper took three
    response = _place(api, token)
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "checkout_changed" and error["field"] == "review_token"
    changes = {change["code"]: change for change in error["details"]["changes"]}
    assert limited.product.name in changes["insufficient_stock"]["message"]
    assert error["details"]["total"] == api.get("/api/v1/cart/").json()["total"]
    assert Order.objects.count() == 0 and Offer.objects.get(pk=limited.pk).stock == 1


def test_placing_without_a_review_is_a_400_saying_review_first(api):
    _fill_cart(api)
    for body in ({**ADDRESS}, {**ADDRESS, "review_token": ""}):
        response = api.post("/api/v1/orders/", body, format="json", HTTP_IDEMPOTENCY_KEY="k-123456")
        assert response.status_code == 400
        error = response.json()["error"]
        assert (error["code"], error["field"]) == ("review_token_missing", "review_token")
    assert Order.objects.count() == 0


def test_placing_a_cart_emptied_since_the_review_is_a_409_cart_empty(api):
    _fill_cart(api)
    token = _review(api)["review_token"]
    assert _place(api, token, key="first-tab-1").status_code == 201
    response = _place(api, token, key="second-tab-2")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "cart_empty"
    assert Order.objects.count() == 1


@pytest.mark.parametrize(
    ("overrides", "key", "field"),
    [
        ({"email": "nope"}, "mobile-key-0001", "email"),
        ({"country": "DEU"}, "mobile-key-0001", "country"),
        ({"postal_code": "?"}, "mobile-key-0001", "postal_code"),
        ({"full_name": ""}, "mobile-key-0001", "full_name"),
        ({"review_token": "forged"}, "mobile-key-0001", "review_token"),
        ({}, "", "Idempotency-Key"),
        ({}, "bad key!", "idempotency_key"),
    ],
)
def test_bad_order_input_is_a_400_naming_the_field_and_writes_nothing(api, overrides, key, field):
    _fill_cart(api)
    token = _review(api)["review_token"]
    response = _place(api, overrides.pop("review_token", token), key=key, **overrides)
    assert response.status_code == 400, response.json()
    assert response.json()["error"]["field"] == field
    assert Order.objects.count() == 0


def test_bad_payment_input_is_a_400(api):
    _fill_cart(api)
    number = _place(api, _review(api)["review_token"]).json()["number"]
    response = api.post(f"/api/v1/orders/{number}/payment/", {"status": "bogus"}, format="json")
    assert response.status_code == 400
    assert Order.objects.get().status == "pending"


def test_bad_review_input_is_a_400(api):
    _fill_cart(api)
    response = api.post("/api/v1/checkout/review/", {"postal_code": "!!"}, format="json")
    assert response.status_code == 400
    assert Cart.objects.get().postal_code == ""


def test_other_shoppers_orders_are_404_and_anonymous_is_401(api):
    _fill_cart(api)
    number = _place(api, _review(api)["review_token"]).json()["number"]
    other = APIClient()
    other.force_authenticate(UserFactory())
    assert other.get(f"/api/v1/orders/{number}/").status_code == 404
    assert other.post(f"/api/v1/orders/{number}/payment/", PAID, format="json").status_code == 404
    assert other.get("/api/v1/orders/").json() == []
    anonymous = APIClient()
    assert anonymous.get("/api/v1/orders/").status_code in (401, 403)
    assert anonymous.post("/api/v1/checkout/review/", {}, format="json").status_code in (401, 403)


def test_review_and_place_without_a_cart_are_the_cart_apis_404(api):
    no_cart = api.get("/api/v1/cart/")
    assert no_cart.status_code == 404
    review = api.post("/api/v1/checkout/review/", {}, format="json")
    placed = _place(api, "any-token")
    for response in (review, placed):
        assert response.status_code == 404
        assert response.json() == no_cart.json()  # one own-cart rule, one answer


def test_the_schema_documents_checkout(api):
    schema = api.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").content
    for path in (b"/api/v1/checkout/review/", b"/api/v1/orders/{number}/payment/"):
        assert path in schema


def test_the_schema_says_checkout_is_for_signed_in_callers_only(api):
    schema = api.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    assert "signed-in callers only" in schema["info"]["description"]
    for path, method in (("/api/v1/checkout/review/", "post"), ("/api/v1/orders/", "post")):
        assert "Signed-in callers only" in schema["paths"][path][method]["description"]


def test_paying_a_paid_order_again_is_refused(api):
    _fill_cart(api)
    number = _place(api, _review(api)["review_token"]).json()["number"]
    api.post(f"/api/v1/orders/{number}/payment/", PAID, format="json")
    again = api.post(f"/api/v1/orders/{number}/payment/", PAID, format="json")
    assert again.status_code == 400
    assert again.json()["error"]["code"] == "order_not_pending"


# --- Idempotency-Key, like Stripe's: same body replayed, another body refused ---------------


@pytest.mark.parametrize("changed", [{"full_name": "Someone Else"}, {"city": "Hamburg"}])
def test_the_same_key_with_another_body_is_a_422_and_orders_nothing(api, changed):
    limited = _fill_cart(api)
    token = _review(api)["review_token"]
    first = _place(api, token)
    assert first.status_code == 201
    reused = _place(api, token, **changed)
    assert reused.status_code == 422, reused.json()
    assert reused.json()["error"]["code"] == "idempotency_key_reused"
    assert reused.json()["error"]["field"] == "Idempotency-Key"
    assert "Idempotent-Replayed" not in reused
    assert Order.objects.count() == 1
    assert Order.objects.get().full_name == ADDRESS["full_name"]
    assert Offer.objects.get(pk=limited.pk).stock == 2


def test_a_replay_with_the_same_body_is_the_first_answer_with_the_header_twice(api):
    _fill_cart(api)
    token = _review(api)["review_token"]
    first = _place(api, token)
    assert first.status_code == 201
    assert "Idempotent-Replayed" not in first
    for _ in range(2):
        again = _place(api, token)
        assert again.status_code == 201
        assert again.json() == first.json()
        assert again["Idempotent-Replayed"] == "true"
    assert Order.objects.count() == 1


def test_the_same_body_in_another_key_order_and_whitespace_is_replayed(api):
    _fill_cart(api)
    body = {**ADDRESS, "review_token": _review(api)["review_token"]}
    first = api.post("/api/v1/orders/", body, format="json", HTTP_IDEMPOTENCY_KEY="spaced-key-1")
    assert first.status_code == 201
    shuffled = (
        "{\n  "
        + ",\n  ".join(f'"{name}" :  "{value}"' for name, value in reversed(body.items()))
        + "\n}"
    )
    again = api.post(
        "/api/v1/orders/",
        shuffled,
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="spaced-key-1",
    )
    assert again.status_code == 201, again.json()
    assert again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()


def test_a_failed_placement_keeps_no_key_and_its_retry_with_the_key_places(api):
    limited = _fill_cart(api)
    token = _review(api)["review_token"]
    offer_update(offer=limited, unit_price=1600)
    refused = _place(api, token)
    assert refused.status_code == 409
    # The 409 is not stored: a retry with the same key (and the new review's token, another
    # body) runs again instead of replaying the refusal or being a 422.
    placed = _place(api, _review(api)["review_token"])
    assert placed.status_code == 201, placed.json()
    assert "Idempotent-Replayed" not in placed
    assert Order.objects.count() == 1


def test_the_schema_documents_the_idempotency_headers_and_limits(api):
    schema = api.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    post = schema["paths"]["/api/v1/orders/"]["post"]
    (key,) = [p for p in post["parameters"] if p["name"] == "Idempotency-Key"]
    assert key["in"] == "header" and key["required"] is True
    assert "8 to 100" in key["description"] and "24 h" in key["description"]
    assert "purge_idempotency_keys" in key["description"]
    assert "Idempotent-Replayed" in post["responses"]["201"]["headers"]
    assert "Idempotent-Replayed" not in post["responses"]["409"].get("headers", {})
    assert "idempotency_key_reused" in post["responses"]["422"]["description"]
    lines = schema["paths"]["/api/v1/cart/lines/"]["post"]
    assert "Idempotent-Replayed" in lines["responses"]["201"]["headers"]
    (optional,) = [p for p in lines["parameters"] if p["name"] == "Idempotency-Key"]
    assert optional.get("required", False) is False and "255" in optional["description"]
