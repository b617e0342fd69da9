"""The API answers as its schema says, in the corners schemathesis found: a ``page`` that is
not a page is the documented 404 (never quietly the first or last page), empty filters are no
filters, an empty PATCH changes nothing, and request bodies are documented as JSON."""

import pytest

from storefront.models import CartLine
from tests.factories import CategoryFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("page", ["", "last", "abc", "0", "999"])
@pytest.mark.parametrize("path", ["/api/v1/categories/", "/api/v1/merchants/", "/api/v1/products/"])
def test_a_page_that_is_not_a_page_is_the_documented_404(api, path, page):
    CategoryFactory()
    response = api.get(path, {"page": page})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_the_first_page_is_page_1_or_no_page(api):
    CategoryFactory()
    assert api.get("/api/v1/categories/").status_code == 200
    assert api.get("/api/v1/categories/", {"page": 1}).status_code == 200


def test_optimizations_page_past_the_end_is_404(alice_api, cart):
    assert alice_api.get("/api/v1/cart/optimizations/", {"page": ""}).status_code == 404


def test_empty_product_filters_are_no_filters(api):
    response = api.get("/api/v1/products/", {"category": "", "ordering": ""})
    assert response.status_code == 200


def test_an_empty_patch_leaves_the_line_as_it_is(alice_api, cart):
    line = CartLine.objects.filter(cart=cart).earliest("id")
    response = alice_api.patch(f"/api/v1/cart/lines/{line.pk}/", {}, format="json")
    assert response.status_code == 200
    assert CartLine.objects.get(pk=line.pk).quantity == line.quantity
    missing = alice_api.patch("/api/v1/cart/lines/999999/", {}, format="json")
    assert missing.status_code == 404


def test_request_bodies_are_documented_as_json_and_token_fields_not_blank(api):
    schema = api.get("/api/v1/schema/", {"format": "json"}).json()
    for path, operations in schema["paths"].items():
        if not path.startswith(("/api/v1/cart", "/api/v1/auth")):
            continue
        for method, operation in operations.items():
            body = operation.get("requestBody") if isinstance(operation, dict) else None
            if body:
                assert list(body["content"]) == ["application/json"], (method, path)
    token = schema["components"]["schemas"]["TokenObtain"]["properties"]
    assert token["username"]["minLength"] == 1 and token["password"]["minLength"] == 1


def test_an_empty_price_range_is_no_filter(api):
    assert api.get("/api/v1/products/", {"price_range": ""}).status_code == 200


@pytest.mark.parametrize(
    ("path", "method", "body"),
    [
        ("/api/v1/checkout/review/", "post", {"postal_code": 195775}),
        ("/api/v1/cart/destination/", "put", {"postal_code": 10115}),
    ],
)
def test_a_number_where_the_schema_says_text_is_refused(alice_api, cart, path, method, body):
    response = getattr(alice_api, method)(path, body, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "not_text"


def test_the_token_takes_text_only(api):
    response = api.post("/api/v1/auth/token/", {"username": 12, "password": "x"}, format="json")
    assert response.status_code == 400


def test_text_inputs_say_they_take_no_null_characters(api):
    schema = api.get("/api/v1/schema/?format=json").json()
    products = schema["paths"]["/api/v1/products/"]["get"]["parameters"]
    search = next(p for p in products if p["name"] == "search")
    assert search["schema"]["pattern"] == "^[^\\x00]*$"
    assert api.get("/api/v1/products/", {"search": "a\x00b"}).status_code == 400
