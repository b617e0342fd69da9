import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db


@pytest.mark.slow
def test_schema_is_valid_openapi_without_warnings(tmp_path):
    out = tmp_path / "schema.yaml"
    # --validate checks against the OpenAPI 3 JSON schema; --fail-on-warn makes any
    # undocumented endpoint or unresolvable type an error.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    assert "/api/v1/cart/optimizations/{run_id}/apply/" in out.read_text()


def test_schema_documents_every_endpoint_and_errors(api):
    response = api.get("/api/v1/schema/?format=json")
    assert response.status_code == 200
    schema = response.json()
    paths = schema["paths"]
    expected = {
        "/api/v1/auth/token/": {"post"},
        "/api/v1/products/": {"get"},
        "/api/v1/products/{product_id}/": {"get"},
        "/api/v1/products/{product_id}/offers/": {"get"},
        "/api/v1/merchants/": {"get"},
        "/api/v1/merchants/{merchant_id}/": {"get"},
        "/api/v1/categories/": {"get"},
        "/api/v1/cart/": {"get", "post"},
        "/api/v1/cart/lines/": {"post"},
        "/api/v1/cart/lines/{line_id}/": {"patch", "delete"},
        "/api/v1/cart/destination/": {"put"},
        "/api/v1/cart/price-watch/": {"get", "put"},
        "/api/v1/cart/optimizations/": {"get", "post"},
        "/api/v1/cart/optimizations/{run_id}/": {"get"},
        "/api/v1/cart/optimizations/{run_id}/apply/": {"post"},
        "/api/v1/cart/optimizations/{run_id}/dismiss/": {"post"},
        "/api/v1/checkout/review/": {"post"},
        "/api/v1/orders/": {"get", "post"},
        "/api/v1/orders/{number}/": {"get"},
        "/api/v1/orders/{number}/payment/": {"post"},
        "/api/v1/orders/{number}/cancel/": {"post"},
        "/api/v1/orders/{number}/packages/{package_id}/cancel/": {"post"},
    }
    assert {path: set(ops) - {"parameters"} for path, ops in paths.items()} == expected
    for path, operations in paths.items():
        for method, operation in operations.items():
            responses = operation["responses"]
            # 414 comes from gunicorn, before the app: its HTML page, documented as such.
            assert set(responses["414"]["content"]) == {"text/html"}, (method, path)
            errors = [code for code in responses if code.startswith(("4", "5")) and code != "414"]
            assert errors, f"{method.upper()} {path} documents no error response"
            for code in errors:
                ref = responses[code]["content"]["application/json"]["schema"]
                assert ref == {"$ref": "#/components/schemas/Error"}
    optimize = paths["/api/v1/cart/optimizations/"]["post"]["responses"]
    assert {"201", "202", "400", "401", "404", "409", "429"} <= set(optimize)
    assert "409" in paths["/api/v1/cart/optimizations/{run_id}/apply/"]["post"]["responses"]


def test_swagger_ui_is_served(api):
    response = api.get("/api/v1/docs/")
    assert response.status_code == 200
    assert b"swagger" in response.content.lower()


def _json_schema(node):
    """OpenAPI 3.0 to JSON Schema for validation: ``nullable: true`` becomes "or null"."""
    if isinstance(node, list):
        return [_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _json_schema(value) for key, value in node.items() if key != "nullable"}
    if node.get("nullable"):
        return {"anyOf": [out, {"type": "null"}]}
    return out
