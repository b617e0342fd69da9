"""The review token records each line's warehouse and the parcels the shopper saw: placing
refuses (409, naming the change) when a line would ship from another warehouse or a parcel
costs or weighs other than shown, even at the same total; tokens made before warehouses were
recorded place as they did."""

import re

import pytest
from django.core import signing
from django.urls import reverse
from rest_framework.test import APIClient

from storefront.carts.pricing_summary import cart_pricing_summary
from storefront.carts.services import cart_line_add
from storefront.checkout.review import CheckoutChanged, review_token_make, review_token_read
from storefront.fulfillment.services import (
    parcel_rate_set,
    product_weight_set,
    warehouse_create,
    warehouse_update,
)
from storefront.fulfillment.stock import warehouse_stock_set
from storefront.models import Cart, Order, OrderLine
from tests.factories import OfferFactory, ProductFactory, UserFactory
from tests.storefront.carts.v2_market import (
    POSTAL_CODE,
    hamburg_costs_as_munich,
    stock_at,
    v2_market,
)
from tests.storefront.orders.conftest import new_key, place, review_token

pytestmark = pytest.mark.django_db

ADDRESS = {
    "email": "guest@example.com",
    "full_name": "Grace Hopper",
    "address_line": "Arlington Rd 1",
    "city": "Berlin",
    "postal_code": POSTAL_CODE,
    "country": "DE",
}


@pytest.fixture
def market():
    return v2_market()


@pytest.fixture
def kettle_cart(market):
    """A cart whose one kettle ships from Munich (then the cheaper parcel, with its one unit),
    reviewed once Hamburg costs as much: (cart, token)."""
    cart = market.cart()
    assert cart_line_add(cart=cart, offer=market.kettle).warehouse_id == market.munich.pk
    hamburg_costs_as_munich(market)
    return cart, review_token(cart)


def _munich_sells_out(market) -> None:
    warehouse_stock_set(offer=market.kettle, warehouse=market.munich, stock=0)


def _codes(error: CheckoutChanged) -> list[str]:
    return [change["code"] for change in error.changes]


def test_the_token_records_each_line_warehouse_and_the_parcels(market):
    cart = market.cart()
    for offer in (market.monitor, market.mug, market.kettle_bolt):
        cart_line_add(cart=cart, offer=offer)
    summary = cart_pricing_summary(cart=cart)
    snap = review_token_read(review_token_make(summary), cart_id=cart.pk)
    lines = {line.line.product.name: line.line_id for g in summary.groups for line in g.lines}
    bolt_line = next(line_id for name, line_id in lines.items() if name == "Kettle")
    assert snap.warehouses == {
        lines["Monitor"]: market.hamburg.pk,
        lines["Mug"]: market.munich.pk,
        bolt_line: None,
    }
    # Hamburg: 4.99 and the 2-10 kg tier's 3.00 for 5 kg.
    assert snap.parcels == {market.hamburg.pk: (799, "5.0"), market.munich.pk: (399, "0.3")}


def test_a_warehouse_sold_out_at_the_same_total_is_a_change_to_confirm(market, kettle_cart):
    cart, token = kettle_cart
    _munich_sells_out(market)
    assert cart_pricing_summary(cart=cart).total == 2000 + 399  # what the review showed
    with pytest.raises(CheckoutChanged) as refused:
        place(cart, token=token)
    assert _codes(refused.value) == ["warehouse_changed"]
    (change,) = refused.value.changes
    assert (change["old"], change["new"]) == (market.munich.pk, market.hamburg.pk)
    assert (change["old_name"], change["new_name"]) == ("Munich", "Hamburg")
    assert change["message"] == "Kettle now ships from Hamburg (was Munich)."
    assert refused.value.total == 2000 + 399
    assert not Order.objects.exists()
    assert stock_at(market.kettle, market.hamburg) == 5
    # Replayed with the same token: refused again, still nothing written.
    with pytest.raises(CheckoutChanged):
        place(cart, token=token)
    assert not Order.objects.exists() and stock_at(market.kettle, market.hamburg) == 5
    # Reviewed again: it places from Hamburg, once, whatever is replayed after.
    key = new_key()
    order = place(cart, token=review_token(cart), key=key)
    assert OrderLine.objects.get(merchant_order__order=order).warehouse_id == market.hamburg.pk
    assert place(cart, token=token, key=key) == order
    assert stock_at(market.kettle, market.hamburg) == 4
    assert Order.objects.count() == 1


def test_restocked_before_placing_the_review_places_from_where_it_said(market, kettle_cart):
    cart, token = kettle_cart
    _munich_sells_out(market)
    warehouse_stock_set(offer=market.kettle, warehouse=market.munich, stock=2)
    order = place(cart, token=token)
    assert OrderLine.objects.get(merchant_order__order=order).warehouse_id == market.munich.pk
    assert (stock_at(market.kettle, market.munich), stock_at(market.kettle, market.hamburg)) == (
        1,
        5,
    )


def test_a_token_made_before_warehouses_were_recorded_places_as_before(market, kettle_cart):
    cart, token = kettle_cart
    payload = signing.loads(token, salt="storefront.checkout.review")
    old = {key: value for key, value in payload.items() if key not in {"w", "wp"}}
    old_token = signing.dumps(old, salt="storefront.checkout.review", compress=True)
    snap = review_token_read(old_token, cart_id=cart.pk)
    assert snap.warehouses is None and snap.parcels is None
    _munich_sells_out(market)
    # Same total: today's behaviour, placed from the warehouse that has it.
    order = place(cart, token=old_token)
    assert OrderLine.objects.get(merchant_order__order=order).warehouse_id == market.hamburg.pk
    assert order.total == 2000 + 399


def test_an_old_token_still_refuses_a_new_total(market, kettle_cart):
    cart, token = kettle_cart
    payload = signing.loads(token, salt="storefront.checkout.review")
    old = {key: value for key, value in payload.items() if key not in {"w", "wp"}}
    old_token = signing.dumps(old, salt="storefront.checkout.review", compress=True)
    _munich_sells_out(market)
    hamburg_rate = {"base_fee": 499, "per_extra_unit": 0, "tiers": [(2000, 0)]}
    parcel_rate_set(warehouse=market.hamburg, **hamburg_rate)
    with pytest.raises(CheckoutChanged) as refused:
        place(cart, token=old_token)
    assert "warehouse_changed" not in _codes(refused.value)
    assert {"terms_changed", "total_changed"} <= set(_codes(refused.value))


def test_parcel_fees_moved_between_warehouses_at_the_same_shipping(market):
    cart = market.cart()
    cart_line_add(cart=cart, offer=market.monitor)  # Hamburg, 499 + 300
    cart_line_add(cart=cart, offer=market.mug)  # Munich, 399
    token = review_token(cart)
    parcel_rate_set(warehouse=market.hamburg, base_fee=599, tiers=[(2000, 0), (10000, 300)])
    parcel_rate_set(warehouse=market.munich, base_fee=299)
    assert cart_pricing_summary(cart=cart).shipping == 799 + 399  # the same as reviewed
    with pytest.raises(CheckoutChanged) as refused:
        place(cart, token=token)
    assert _codes(refused.value) == ["parcels_changed"]
    assert refused.value.changes[0]["message"] == (
        "Acme's parcel from Hamburg now costs €8.99 (was €7.99); "
        "Acme's parcel from Munich now costs €2.99 (was €3.99)."
    )
    assert not Order.objects.exists()


def test_a_parcel_weight_the_page_shows_differently_is_a_change(market):
    cart = market.cart()
    cart_line_add(cart=cart, offer=market.monitor)
    kettle = cart_line_add(cart=cart, offer=market.kettle)  # joins the monitor: 6.2 kg
    assert kettle.warehouse_id == market.hamburg.pk
    token = review_token(cart)
    # 20 g more: still "6.2 kg" on the page, the same fee (placed below).
    product_weight_set(product=market.kettle.product, weight_g=1220)
    # A kilogram more: 7.2 kg, still in the 2-10 kg tier (the same fee), shown otherwise.
    product_weight_set(product=market.kettle.product, weight_g=2200)
    with pytest.raises(CheckoutChanged) as refused:
        place(cart, token=token)
    assert _codes(refused.value) == ["parcels_changed"]
    assert "weighs 7.2 kg (was 6.2 kg)" in refused.value.changes[0]["message"]
    product_weight_set(product=market.kettle.product, weight_g=1220)
    assert place(cart, token=token).total == 15000 + 2000 + 799


def test_a_merchant_that_starts_shipping_from_a_warehouse_is_a_change(market):
    cart = market.cart()
    cart_line_add(cart=cart, offer=market.kettle_bolt)
    token = review_token(cart)
    # Bolt's first warehouse takes over its stock and shipping: the same total.
    warehouse_create(merchant=market.bolt, name="Bremen")
    with pytest.raises(CheckoutChanged) as refused:
        place(cart, token=token)
    assert _codes(refused.value) == ["warehouse_changed"]
    assert refused.value.changes[0]["message"] == "Kettle now ships from Bolt's Bremen."
    assert refused.value.changes[0]["old"] is None


def test_the_api_answers_409_naming_the_warehouse(market):
    api = APIClient()
    api.force_authenticate(UserFactory())
    assert api.post("/api/v1/cart/").status_code == 201
    api.put("/api/v1/cart/destination/", {"postal_code": POSTAL_CODE}, format="json")
    api.post("/api/v1/cart/lines/", {"offer_id": market.kettle.pk}, format="json")
    hamburg_costs_as_munich(market)
    review = api.post("/api/v1/checkout/review/", {}, format="json").json()
    (line,) = review["cart"]["lines"]
    assert line["warehouse_name"] == "Munich"
    _munich_sells_out(market)
    body = {**ADDRESS, "review_token": review["review_token"]}
    refused = api.post("/api/v1/orders/", body, format="json", HTTP_IDEMPOTENCY_KEY="api-key-0001")
    assert refused.status_code == 409, refused.json()
    error = refused.json()["error"]
    assert error["code"] == "checkout_changed"
    (change,) = error["details"]["changes"]
    assert change["code"] == "warehouse_changed" and change["new_name"] == "Hamburg"
    assert error["details"]["total"] == 2000 + 399
    again = api.post("/api/v1/checkout/review/", {}, format="json").json()
    body["review_token"] = again["review_token"]
    placed = api.post("/api/v1/orders/", body, format="json", HTTP_IDEMPOTENCY_KEY="api-key-0002")
    assert placed.status_code == 201, placed.json()
    (package,) = placed.json()["packages"]
    assert package["lines"][0]["warehouse_id"] == market.hamburg.pk


def _form(html: str) -> dict:
    return dict(re.findall(r'name="(review_token|idempotency_key)" value="([^"]+)"', html))


def test_the_checkout_page_names_the_warehouse_and_places_after_it(client, market):
    client.post(reverse("cart_destination"), {"postal_code": POSTAL_CODE})
    client.post(reverse("cart_add"), {"offer": market.kettle.pk, "quantity": 1})
    cart = Cart.objects.get(session_key=client.session.session_key)
    assert cart.lines.get().warehouse_id == market.munich.pk
    hamburg_costs_as_munich(market)
    form = _form(client.get(reverse("checkout")).content.decode())
    _munich_sells_out(market)
    refused = client.post(reverse("checkout"), {**ADDRESS, **form})
    assert refused.status_code == 409
    html = refused.content.decode()
    notice = re.search(r'data-testid="checkout-notice">(.*?)</div>', html, re.S)
    assert notice is not None
    assert "Kettle now ships from Hamburg (was Munich)." in notice.group(1)
    assert 'data-warehouse="Hamburg"' in html and 'data-warehouse="Munich"' not in html
    assert not Order.objects.exists()
    placed = client.post(reverse("checkout"), {**ADDRESS, **_form(html)})
    assert placed.status_code == 302
    assert OrderLine.objects.get().warehouse_id == market.hamburg.pk


def test_a_full_cart_token_fits_the_forms(market):
    """100 lines (the most a cart holds) over two warehouses: under the 4,000 characters the
    web form and the API take."""
    cart = market.cart()
    for index in range(100):
        warehouse = market.hamburg if index % 2 else market.munich
        offer = OfferFactory(
            merchant=market.acme,
            unit_price=99_999 + index,
            product=ProductFactory(weight_g=12_345 + index),
        )
        warehouse_stock_set(offer=offer, warehouse=warehouse, stock=None)
        offer.refresh_from_db()
        cart_line_add(cart=cart, offer=offer, quantity=999)
    token = review_token(cart)
    assert len(cart_pricing_summary(cart=cart).groups[0].parcels) == 2
    assert len(token) < 4000, len(token)


def test_a_merchant_whose_warehouses_close_ships_directly_and_says_so(market, kettle_cart):
    cart, token = kettle_cart
    for warehouse in (market.hamburg, market.munich):
        warehouse_update(warehouse=warehouse, active=False)
    with pytest.raises(CheckoutChanged) as refused:
        place(cart, token=token)
    moved = [c for c in refused.value.changes if c["code"] == "warehouse_changed"]
    assert [c["message"] for c in moved] == [
        "Kettle no longer ships from Munich; Acme ships it directly."
    ]
    assert not Order.objects.exists()
