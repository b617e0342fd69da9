"""A run stored before its merchants shipped from warehouses names no warehouse for its lines.
Applying it picks one explicitly (the cart's rule: the merchant's first warehouse that ships
the quantity here), writes it on the line and says which; the Improve panel shows the pick,
or the run as out of date with the reason, and nothing crashes."""

import re

import pytest
from django.urls import reverse

from smartcart.models import OptimizationRun
from storefront.fulfillment.stock import warehouse_stock_set
from storefront.models import Cart, CartLine
from tests.factories import UserFactory
from tests.storefront.carts.v2_market import POSTAL_CODE, v2_market

pytestmark = pytest.mark.django_db

WAREHOUSE_KEYS = (
    "old_warehouse_id",
    "old_warehouse_name",
    "new_warehouse_id",
    "new_warehouse_name",
)


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def _as_stored_before_warehouses(run: OptimizationRun) -> OptimizationRun:
    """The run's suggestion as version 1 stored it: no warehouse on any line or merchant."""
    suggestion = dict(run.suggestion)
    suggestion["lines"] = [
        {key: value for key, value in line.items() if key not in WAREHOUSE_KEYS}
        for line in suggestion["lines"]
    ]
    for rows in ("merchants", "current_merchants"):
        suggestion[rows] = [
            {key: value for key, value in row.items() if key != "parcels"}
            for row in suggestion.get(rows, [])
        ]
    OptimizationRun.objects.filter(pk=run.pk).update(suggestion=suggestion)
    run.refresh_from_db()
    return run


@pytest.fixture
def market():
    return v2_market()


def _cart_and_old_run(client, market, *, quantity: int = 1):
    """Bolt's kettle (v1) next to Acme's monitor (Hamburg): moving the kettle to Acme joins
    the monitor's parcel. The run is then stripped to the version 1 shape."""
    client.post(reverse("cart_destination"), {"postal_code": POSTAL_CODE})
    client.post(reverse("cart_add"), {"offer": market.monitor.pk, "quantity": 1})
    client.post(reverse("cart_add"), {"offer": market.kettle_bolt.pk, "quantity": quantity})
    cart = Cart.objects.get(session_key=client.session.session_key)
    assert client.post(reverse("cart_improve")).status_code == 302
    run = OptimizationRun.objects.get(cart=cart)
    (moved,) = [line for line in run.suggestion["lines"] if line["changed"]]
    assert moved["new_offer_id"] == market.kettle.pk  # the solver moves the kettle to Acme
    return cart, _as_stored_before_warehouses(run)


def test_the_panel_shows_the_warehouse_applying_will_choose(client, market):
    _cart_and_old_run(client, market)
    html = client.get(reverse("cart")).content.decode()
    panel = _text(html[html.index('id="improve"') :])
    assert "You can save" in panel
    assert "Acme · Hamburg" in panel  # the kettle joins the monitor's parcel at Hamburg
    assert "ships from Hamburg: chosen now, as this suggestion names no warehouse" in panel


def test_applying_writes_the_chosen_warehouse_and_says_so(client, market):
    cart, run = _cart_and_old_run(client, market)
    applied = client.post(reverse("cart_improve_apply", args=[run.pk]), follow=True)
    assert applied.status_code == 200
    text = _text(applied.content.decode())
    assert "Suggestion applied" in text
    assert (
        "Chosen now, as the suggestion named no warehouse: Kettle ships from Hamburg (Acme)."
        in text
    )
    kettle = CartLine.objects.get(cart=cart, product=market.kettle.product)
    assert (kettle.offer_id, kettle.warehouse_id) == (market.kettle.pk, market.hamburg.pk)
    run.refresh_from_db()
    assert run.applied_at is not None
    # The cart prices what the run promised, from the warehouse written.
    assert "Ships from Hamburg · 2 items · 6.2 kg · €7.99" in _text(
        client.get(reverse("cart")).content.decode()
    )


def test_no_warehouse_holding_the_quantity_refuses_by_name(client, market):
    # Two kettles: Hamburg has 5 when the run is made, then 1 (Munich 1): 2 in all, none at one.
    cart, run = _cart_and_old_run(client, market, quantity=2)
    warehouse_stock_set(offer=market.kettle, warehouse=market.hamburg, stock=1)
    html = client.get(reverse("cart")).content.decode()
    panel = _text(html[html.index('id="improve"') :])
    assert "This suggestion is out of date" in panel
    assert "before some of its merchants shipped from warehouses" in panel
    refused = client.post(reverse("cart_improve_apply", args=[run.pk]))
    assert refused.status_code == 409
    assert "No warehouse of Acme can ship 2 of Kettle to you" in _text(refused.content.decode())
    kettle = CartLine.objects.get(cart=cart, product=market.kettle.product)
    assert kettle.offer_id == market.kettle_bolt.pk  # nothing written
    run.refresh_from_db()
    assert run.applied_at is None


def test_the_api_applies_it_and_the_cart_names_the_warehouse(market):
    from rest_framework.test import APIClient

    user = UserFactory()
    api = APIClient()
    api.force_authenticate(user)
    api.put("/api/v1/cart/destination/", {"postal_code": POSTAL_CODE}, format="json")
    for offer in (market.monitor, market.kettle_bolt):
        assert (
            api.post("/api/v1/cart/lines/", {"offer_id": offer.pk}, format="json").status_code
            == 201
        )
    created = api.post("/api/v1/cart/optimizations/", {}, format="json")
    assert created.status_code == 201, created.content
    run = _as_stored_before_warehouses(OptimizationRun.objects.get(pk=created.json()["id"]))
    applied = api.post(f"/api/v1/cart/optimizations/{run.pk}/apply/")
    assert applied.status_code == 200, applied.content
    kettle = next(line for line in applied.json()["lines"] if line["offer_id"] == market.kettle.pk)
    assert (kettle["warehouse_id"], kettle["warehouse_name"]) == (market.hamburg.pk, "Hamburg")
    assert (
        Cart.objects.get(owner=user).lines.get(offer=market.kettle).warehouse_id
        == market.hamburg.pk
    )
