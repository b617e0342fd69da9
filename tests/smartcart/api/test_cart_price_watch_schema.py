"""The cart resource's price-watch field (smartcart's hook into storefront's cart API) as
the schema documents it."""

import pytest

from tests.storefront.api.test_schema import _json_schema

pytestmark = pytest.mark.django_db


@pytest.mark.slow
def test_a_cart_with_a_price_watch_notice_matches_the_schema(client_for, shopper):
    """The cart resource's hook fields are in the schema: a real body with a notice
    validates against the documented response, ``price_watch`` included."""
    import jsonschema

    from smartcart.models import OptimizationRun
    from storefront.carts.services import cart_get_or_create
    from tests.factories import CartLineFactory

    api = client_for(shopper)
    cart = cart_get_or_create(user=shopper)
    line = CartLineFactory(cart=cart)
    cart.refresh_from_db()
    OptimizationRun.objects.create(
        cart=cart,
        source=OptimizationRun.Source.PRICE_WATCH,
        status=OptimizationRun.Status.DONE,
        cart_version=cart.version,
        current_total=line.offer.unit_price + 499,
        suggested_total=line.offer.unit_price + 299,
        savings=200,
        price_increase=None,
    )
    schema = api.get("/api/v1/schema/?format=json").json()
    body = api.get("/api/v1/cart/").json()
    assert body["price_watch"]["savings"] == 200
    response = schema["paths"]["/api/v1/cart/"]["get"]["responses"]["200"]
    ref = response["content"]["application/json"]["schema"]
    resource = _json_schema({**ref, "components": schema["components"]})
    assert "price_watch" in schema["components"]["schemas"]["CartResource"]["properties"]
    assert "price_watch" in schema["components"]["schemas"]["CartResource"]["required"]
    jsonschema.validate(body, resource)
    body["price_watch"] = None  # no notice: null is documented too
    jsonschema.validate(body, resource)
    body["price_watch"] = {"savings": "a lot"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(body, resource)
