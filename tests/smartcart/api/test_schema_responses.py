"""Real responses of every endpoint, successes and errors, validate against the OpenAPI schema
the API publishes (schemathesis' response conformance checks: status documented, body and
headers match the documented schema)."""

import pytest
import requests

from tests.carts import cart_with_choices
from tests.factories import TEST_PASSWORD, OfferFactory, ProductFactory

pytestmark = pytest.mark.django_db

ADDRESS = {
    "email": "alice@example.com",
    "full_name": "Alice Schema",
    "address_line": "Teststr. 1",
    "city": "Berlin",
    "postal_code": "10115",
    "country": "DE",
}
PAID = {"status": "confirmed", "fraud_status": "accept", "gateway_response": "3ds-disabled"}


@pytest.fixture
def schema(api):
    # Imported here: schemathesis takes ~2 s to import, paid by every test worker that
    # collects this module, even where its slow tests are deselected (make test-fast).
    import schemathesis

    return schemathesis.openapi.from_dict(api.get("/api/v1/schema/?format=json").json())


def _check(schema, template: str, method: str, response) -> None:
    from schemathesis.core.transport import Response

    headers = {name.lower(): [value] for name, value in response.headers.items()}
    wrapped = Response(
        status_code=response.status_code,
        headers=headers,
        content=response.content,
        request=requests.Request(method, f"http://testserver{template}").prepare(),
        elapsed=0.0,
        verify=True,
    )
    schema[template][method].validate_response(wrapped)


@pytest.mark.slow
def test_every_endpoint_answers_as_documented(api, alice_api, shopper, schema):
    cart = cart_with_choices(owner=shopper)
    line = cart.lines.first()
    product = line.offer.product
    merchant = line.offer.merchant
    seen: set[tuple[str, str]] = set()

    def check(template, method, response, expected):
        assert response.status_code == expected, (template, method, response.content[:300])
        _check(schema, template, method, response)
        seen.add((template, method.lower()))

    check("/api/v1/auth/token/", "POST", api.post("/api/v1/auth/token/", {}, format="json"), 400)
    token = api.post(
        "/api/v1/auth/token/", {"username": "alice", "password": TEST_PASSWORD}, format="json"
    )
    check("/api/v1/auth/token/", "POST", token, 200)
    check("/api/v1/products/", "GET", api.get("/api/v1/products/?search=Widget"), 200)
    check(
        "/api/v1/products/{product_id}/",
        "GET",
        api.get(f"/api/v1/products/{product.pk}/"),
        200,
    )
    check("/api/v1/products/{product_id}/", "GET", api.get("/api/v1/products/999999/"), 404)
    check(
        "/api/v1/products/{product_id}/offers/",
        "GET",
        api.get(f"/api/v1/products/{product.pk}/offers/"),
        200,
    )
    check("/api/v1/merchants/", "GET", api.get("/api/v1/merchants/"), 200)
    check(
        "/api/v1/merchants/{merchant_id}/",
        "GET",
        api.get(f"/api/v1/merchants/{merchant.pk}/"),
        200,
    )
    check("/api/v1/categories/", "GET", api.get("/api/v1/categories/"), 200)
    check("/api/v1/cart/", "GET", api.get("/api/v1/cart/"), 401)
    check("/api/v1/cart/", "GET", alice_api.get("/api/v1/cart/"), 200)
    check("/api/v1/cart/", "POST", alice_api.post("/api/v1/cart/"), 200)
    check(
        "/api/v1/cart/destination/",
        "PUT",
        alice_api.put(
            "/api/v1/cart/destination/",
            {"postal_code": "10115"},
            format="json",
        ),
        200,
    )
    watch = "/api/v1/cart/price-watch/"
    check(watch, "GET", api.get(watch), 401)
    check(watch, "GET", alice_api.get(watch), 200)
    check(watch, "PUT", alice_api.put(watch, {"email": True}, format="json"), 200)
    check(watch, "PUT", alice_api.put(watch, {}, format="json"), 400)
    extra = OfferFactory(product=ProductFactory(name="Extra"), merchant=merchant)
    added = alice_api.post(
        "/api/v1/cart/lines/", {"offer_id": extra.pk, "quantity": 1}, format="json"
    )
    check("/api/v1/cart/lines/", "POST", added, 201)
    check(
        "/api/v1/cart/lines/{line_id}/",
        "PATCH",
        alice_api.patch(f"/api/v1/cart/lines/{line.pk}/", {"quantity": 2}, format="json"),
        200,
    )
    check(
        "/api/v1/cart/lines/{line_id}/",
        "PATCH",
        alice_api.patch(f"/api/v1/cart/lines/{line.pk}/", {"quantity": -1}, format="json"),
        400,
    )
    created = alice_api.post("/api/v1/cart/optimizations/", {}, format="json")
    check("/api/v1/cart/optimizations/", "POST", created, 201)
    run_id = created.json()["id"]
    listed = alice_api.get("/api/v1/cart/optimizations/")
    check("/api/v1/cart/optimizations/", "GET", listed, 200)
    assert listed.json()["results"][0]["id"] == run_id
    check(
        "/api/v1/cart/optimizations/{run_id}/",
        "GET",
        alice_api.get(f"/api/v1/cart/optimizations/{run_id}/"),
        200,
    )
    check(
        "/api/v1/cart/optimizations/{run_id}/apply/",
        "POST",
        alice_api.post(f"/api/v1/cart/optimizations/{run_id}/apply/"),
        200,
    )
    check(
        "/api/v1/cart/optimizations/{run_id}/apply/",
        "POST",
        alice_api.post(f"/api/v1/cart/optimizations/{run_id}/apply/"),
        409,
    )
    second = alice_api.post("/api/v1/cart/optimizations/", {}, format="json").json()
    check(
        "/api/v1/cart/optimizations/{run_id}/dismiss/",
        "POST",
        alice_api.post(f"/api/v1/cart/optimizations/{second['id']}/dismiss/"),
        200,
    )
    removable = cart.lines.last()
    check(
        "/api/v1/cart/lines/{line_id}/",
        "DELETE",
        alice_api.delete(f"/api/v1/cart/lines/{removable.pk}/"),
        204,
    )
    review = alice_api.post("/api/v1/checkout/review/", {"postal_code": "10115"}, format="json")
    check("/api/v1/checkout/review/", "POST", review, 200)
    placed = alice_api.post(
        "/api/v1/orders/",
        {**ADDRESS, "review_token": review.json()["review_token"]},
        format="json",
        HTTP_IDEMPOTENCY_KEY="schema-test-0001",
    )
    check("/api/v1/orders/", "POST", placed, 201)
    number = placed.json()["number"]
    check("/api/v1/orders/", "GET", alice_api.get("/api/v1/orders/"), 200)
    check("/api/v1/orders/{number}/", "GET", alice_api.get(f"/api/v1/orders/{number}/"), 200)
    paid = alice_api.post(f"/api/v1/orders/{number}/payment/", PAID, format="json")
    check("/api/v1/orders/{number}/payment/", "POST", paid, 200)
    order_cancel = f"/api/v1/orders/{number}/cancel/"
    check("/api/v1/orders/{number}/cancel/", "POST", alice_api.post(order_cancel), 200)
    check("/api/v1/orders/{number}/cancel/", "POST", alice_api.post(order_cancel), 409)
    package_id = paid.json()["packages"][0]["id"]
    package_cancel = f"/api/v1/orders/{number}/packages/{package_id}/cancel/"
    template = "/api/v1/orders/{number}/packages/{package_id}/cancel/"
    check(template, "POST", alice_api.post(package_cancel), 409)
    documented = {
        (path, method)
        for path, operations in schema.raw_schema["paths"].items()
        for method in operations
        if method != "parameters"
    }
    assert documented == seen
