"""Every failure under /api/ answers the API's JSON error, never an HTML page or a 500."""

import json

import pytest

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

TOKEN_URL = "/api/v1/auth/token/"


def _error(response) -> dict:
    assert response["Content-Type"].startswith("application/json"), response.content[:200]
    return response.json()["error"]


def test_deeply_nested_json_is_a_400_not_a_500(client):
    body = '{"username": ' + "[" * 100_000 + "]" * 100_000 + ', "password": "x"}'
    response = client.post(TOKEN_URL, body, content_type="application/json")
    assert response.status_code == 400
    assert _error(response)["code"] == "parse_error"


def test_json_nested_past_the_limit_is_refused(client, settings):
    settings.API_JSON_MAX_DEPTH = 5
    body = json.dumps({"username": [[[[["x"]]]]], "password": "x"})
    response = client.post(TOKEN_URL, body, content_type="application/json")
    assert response.status_code == 400
    assert "nested deeper than 5" in _error(response)["message"]


def test_json_body_over_the_size_limit_is_a_json_413(client):
    body = json.dumps({"username": "a" * (21 * 1024 * 1024), "password": "x"})
    response = client.post(TOKEN_URL, body, content_type="application/json")
    assert response.status_code == 413
    assert _error(response)["code"] == "request_too_large"


def test_form_body_over_the_size_limit_is_a_json_413(client):
    response = client.post(TOKEN_URL, {"username": "a" * (21 * 1024 * 1024), "password": "x"})
    assert response.status_code == 413
    assert _error(response)["code"] == "request_too_large"


def test_too_many_form_fields_is_a_json_400(client):
    fields = {f"f{i}": "x" for i in range(2000)}
    response = client.post(TOKEN_URL, fields)
    assert response.status_code == 400
    assert _error(response)["code"] == "too_many_fields"


def test_malformed_json_is_a_json_400(client):
    response = client.post(TOKEN_URL, "{nope", content_type="application/json")
    assert response.status_code == 400
    assert _error(response)["code"] == "parse_error"


def test_an_unhandled_error_is_a_json_500(client, monkeypatch):
    from storefront.catalog import apis as catalog

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(catalog.CategoryListView, "get", broken)
    client.raise_request_exception = False
    response = client.get("/api/v1/categories/")
    assert response.status_code == 500
    assert _error(response) == {
        "code": "server_error",
        "message": "Something went wrong on our side. Try again later.",
        "field": None,
    }


def test_html_pages_keep_their_html_errors(client):
    UserFactory(username="alice")
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
