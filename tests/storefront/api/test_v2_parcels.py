"""The cart, suggestion and order APIs on pricing contract version 2: parcels per merchant
(warehouse id and name, units, weight_g, fee), each line's warehouse, and the schema."""

import pytest

from storefront.models import WarehouseStock
from tests.storefront.carts.v2_market import POSTAL_CODE, v2_market

pytestmark = pytest.mark.django_db

ADDRESS = {
    "email": "alice@example.com",
    "full_name": "Alice",
    "address_line": "Invalidenstr. 1",
    "city": "Berlin",
    "postal_code": POSTAL_CODE,
    "country": "DE",
}


@pytest.fixture
def market():
    return v2_market()


def _parcels(merchant: dict) -> list[tuple]:
    return [
        (p["warehouse_id"], p["warehouse_name"], p["units"], p["weight_g"], p["fee"])
        for p in merchant["parcels"]
    ]


def _fill(api, market):
    assert api.post("/api/v1/cart/").status_code == 201
    api.put("/api/v1/cart/destination/", {"postal_code": POSTAL_CODE}, format="json")
    for offer in (market.kettle, market.monitor, market.kettle_bolt):
        if offer is market.kettle_bolt:
            continue
        response = api.post("/api/v1/cart/lines/", {"offer_id": offer.pk}, format="json")
        assert response.status_code == 201, response.json()


def test_the_cart_has_parcels_and_line_warehouses(alice_api, market):
    _fill(alice_api, market)
    body = alice_api.get("/api/v1/cart/").json()
    assert body["postal_code"] == POSTAL_CODE
    (acme,) = body["merchants"]
    h, m = market.hamburg.pk, market.munich.pk
    # The kettle came first, alone: Munich was cheaper; the monitor only sells from Hamburg.
    assert _parcels(acme) == [(h, "Hamburg", 1, 5000, 799), (m, "Munich", 1, 1200, 399)]
    assert {line["product_name"]: line["warehouse_name"] for line in body["lines"]} == {
        "Kettle": "Munich",
        "Monitor": "Hamburg",
    }
    assert acme["shipping"] == 799 + 399


def test_the_suggestion_and_the_order_have_parcels(alice_api, market):
    _fill(alice_api, market)
    run = alice_api.post("/api/v1/cart/optimizations/", {}, format="json").json()
    assert run["status"] == "done" and run["savings"] == 399
    (acme,) = run["suggestion"]["merchants"]
    assert _parcels(acme) == [(market.hamburg.pk, "Hamburg", 2, 6200, 799)]
    assert acme["parcels"][0]["node"] == str(market.hamburg.pk)
    kettle = next(row for row in run["suggestion"]["lines"] if row["product_name"] == "Kettle")
    assert (kettle["old_warehouse_name"], kettle["new_warehouse_name"]) == ("Munich", "Hamburg")
    applied = alice_api.post(f"/api/v1/cart/optimizations/{run['id']}/apply/", {}, format="json")
    assert applied.status_code == 200, applied.json()
    review = alice_api.post(
        "/api/v1/checkout/review/", {"postal_code": POSTAL_CODE}, format="json"
    ).json()
    assert _parcels(review["cart"]["merchants"][0]) == [
        (market.hamburg.pk, "Hamburg", 2, 6200, 799)
    ]
    placed = alice_api.post(
        "/api/v1/orders/",
        {**ADDRESS, "review_token": review["review_token"]},
        format="json",
        HTTP_IDEMPOTENCY_KEY="v2-parcels-0001",
    )
    assert placed.status_code == 201, placed.json()
    (package,) = placed.json()["packages"]
    assert _parcels(package) == [(market.hamburg.pk, "Hamburg", 2, 6200, 799)]
    assert {line["warehouse_id"] for line in package["lines"]} == {market.hamburg.pk}
    stock = WarehouseStock.objects.get(offer=market.kettle, warehouse=market.hamburg).stock
    assert stock == 4


def test_the_schema_documents_parcels(api):
    schema = api.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    components = schema["components"]["schemas"]
    for name in ("Parcel", "LinesParcel", "NodeParcel"):
        assert {"warehouse_id", "warehouse_name", "units", "weight_g", "fee"} <= set(
            components[name]["properties"]
        )
    assert "parcels" in components["CartMerchant"]["properties"]
    assert "parcels" in components["SuggestedMerchant"]["properties"]
    assert "parcels" in components["MerchantOrder"]["properties"]
    assert "new_warehouse_id" in components["SuggestedLine"]["properties"]
