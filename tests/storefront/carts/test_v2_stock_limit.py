"""A line ships whole from one warehouse: when only a merchant's warehouses together hold the
quantity (2 in Hamburg + 2 in Munich, the line wants 3), the cart, its page, the API and
checkout quote the most one warehouse can ship, and refuse more the way they refuse more than
a version 1 offer's stock."""

import re

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from storefront.carts.fulfillment import cart_nodes_read
from storefront.carts.pricing_summary import cart_pricing_summary, cart_pricing_summary_via_sql
from storefront.carts.services import cart_line_add, cart_line_set_quantity
from storefront.checkout.review import CheckoutChanged
from storefront.errors import Conflict
from storefront.fulfillment.stock import warehouse_stock_set
from storefront.models import Cart, CartLine, Order, ParcelRate
from tests.factories import UserFactory
from tests.storefront.carts.v2_market import POSTAL_CODE, stock_at, v2_market
from tests.storefront.orders.conftest import place, review_token

pytestmark = pytest.mark.django_db

ONE_WAREHOUSE = "Only 2 can ship from one warehouse of Acme; you asked for 3."


@pytest.fixture
def market():
    market = v2_market()
    # Kettles: 2 in Hamburg, 2 in Munich (the offer's total is 4).
    _kettles(market, hamburg=2, munich=2)
    return market


def _kettles(market, *, hamburg, munich) -> None:
    warehouse_stock_set(offer=market.kettle, warehouse=market.hamburg, stock=hamburg)
    warehouse_stock_set(offer=market.kettle, warehouse=market.munich, stock=munich)
    market.kettle.refresh_from_db()


def _three_kettles(market) -> CartLine:
    """A cart line of 3 kettles, added while Hamburg had them; then stock moved to 2 + 2."""
    _kettles(market, hamburg=5, munich=1)
    cart = market.cart()
    line = cart_line_add(cart=cart, offer=market.kettle, quantity=3)
    assert line.warehouse_id == market.hamburg.pk
    _kettles(market, hamburg=2, munich=2)
    return line


def test_the_most_one_warehouse_ships_is_the_best_stocked_node(market):
    def most():
        nodes = cart_nodes_read(
            merchant_ids=[market.acme.pk], offer_ids=[market.kettle.pk], postal_code=POSTAL_CODE
        )
        return nodes.ships_at_most(merchant_id=market.acme.pk, offer_id=market.kettle.pk)

    assert market.kettle.stock == 4 and most() == 2
    _kettles(market, hamburg=3, munich=1)
    assert most() == 3
    _kettles(market, hamburg=None, munich=1)
    assert most() is None  # unlimited at one warehouse
    # A warehouse with no rate for the destination ships nothing there, whatever it holds.
    _kettles(market, hamburg=1, munich=7)
    ParcelRate.objects.filter(warehouse=market.munich).update(postal_prefix="8")
    assert most() == 1


def test_adding_more_than_one_warehouse_holds_is_refused_with_its_figure(market):
    cart = market.cart()
    version = cart.version
    for quantity in (3, 4, 5):  # 3 and 4 are in the total, 5 is past it: the same answer
        with pytest.raises(Conflict) as refused:
            cart_line_add(cart=cart, offer=market.kettle, quantity=quantity)
        assert refused.value.code == "insufficient_stock"
        assert refused.value.message == ONE_WAREHOUSE.replace("for 3", f"for {quantity}")
    assert not cart.lines.exists() and Cart.objects.get(pk=cart.pk).version == version
    line = cart_line_add(cart=cart, offer=market.kettle, quantity=2)
    with pytest.raises(Conflict) as refused:  # the same product again: 2 + 1
        cart_line_add(cart=cart, offer=market.kettle)
    assert refused.value.message == ONE_WAREHOUSE
    line.refresh_from_db()
    assert line.quantity == 2


def test_raising_a_quantity_past_one_warehouse_is_refused_lowering_is_not(market):
    cart = market.cart()
    line = cart_line_add(cart=cart, offer=market.kettle, quantity=2)
    version = Cart.objects.get(pk=cart.pk).version
    with pytest.raises(Conflict) as refused:
        cart_line_set_quantity(cart=cart, line_id=line.pk, quantity=3)
    assert refused.value.message == ONE_WAREHOUSE
    assert Cart.objects.get(pk=cart.pk).version == version
    assert cart_line_set_quantity(cart=cart, line_id=line.pk, quantity=1).quantity == 1


def test_the_cart_quotes_one_warehouse_never_the_sum(market):
    line = _three_kettles(market)
    for price in (cart_pricing_summary, cart_pricing_summary_via_sql):
        summary = price(cart=line.cart)
        (short,) = summary.unavailable
        assert (short.problem, short.max_quantity, short.from_warehouses) == (
            "insufficient_stock",
            2,
            True,
        )
        assert short.stock_note == "only 2 can ship from one warehouse of Acme"
    # Stock moving on, out of order: Munich gets 3 (the line ships from there), Hamburg then
    # 3 too (the line goes back to the warehouse it was added at).
    _kettles(market, hamburg=2, munich=3)
    (kettle,) = cart_pricing_summary(cart=line.cart).groups[0].lines
    assert (kettle.warehouse_name, kettle.max_quantity) == ("Munich", 3)
    _kettles(market, hamburg=3, munich=3)
    (kettle,) = cart_pricing_summary(cart=line.cart).groups[0].lines
    assert kettle.warehouse_name == "Hamburg"


def test_none_where_it_ships_or_none_at_all(market):
    line = _three_kettles(market)
    ParcelRate.objects.filter(warehouse__in=[market.hamburg, market.munich]).update(
        postal_prefix="8"
    )
    (short,) = cart_pricing_summary(cart=line.cart).unavailable
    assert short.max_quantity == 0
    assert short.stock_note == "no warehouse of Acme that ships to your address has it"
    _kettles(market, hamburg=0, munich=0)
    (short,) = cart_pricing_summary(cart=line.cart).unavailable
    assert short.stock_note == "sold out at Acme"


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


def test_the_cart_and_checkout_pages_say_one_warehouse(client, market):
    _kettles(market, hamburg=5, munich=1)
    client.post(reverse("cart_destination"), {"postal_code": POSTAL_CODE})
    client.post(reverse("cart_add"), {"offer": market.kettle.pk, "quantity": 3})
    assert CartLine.objects.get().quantity == 3
    _kettles(market, hamburg=2, munich=2)
    cart_page = _text(client.get(reverse("cart")).content.decode())
    assert (
        "Only 2 can ship from one warehouse of Acme: lower the quantity or choose another seller."
        in cart_page
    )
    assert "Only 4" not in cart_page
    checkout = client.get(reverse("checkout")).content.decode()
    assert "Kettle: only 2 can ship from one warehouse of Acme, you have 3 in your cart." in (
        _text(checkout)
    )
    assert 'data-testid="place-order"' not in checkout
    # Raising it on the cart page: refused there, with the figure.
    line = CartLine.objects.get()
    cart_line_set_quantity(cart=line.cart, line_id=line.pk, quantity=2)
    refused = client.post(reverse("cart_line_update", args=[line.pk]), {"quantity": 4})
    assert refused.status_code == 409
    assert ONE_WAREHOUSE.replace("for 3", "for 4") in _text(refused.content.decode())
    assert CartLine.objects.get().quantity == 2


def test_the_api_quotes_and_refuses_one_warehouse(market):
    api = APIClient()
    api.force_authenticate(UserFactory())
    assert api.post("/api/v1/cart/").status_code == 201
    api.put("/api/v1/cart/destination/", {"postal_code": POSTAL_CODE}, format="json")
    refused = api.post(
        "/api/v1/cart/lines/", {"offer_id": market.kettle.pk, "quantity": 3}, format="json"
    )
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "insufficient_stock"
    assert refused.json()["error"]["message"] == ONE_WAREHOUSE
    added = api.post(
        "/api/v1/cart/lines/", {"offer_id": market.kettle.pk, "quantity": 2}, format="json"
    )
    assert added.status_code == 201, added.json()
    (line,) = api.get("/api/v1/cart/").json()["lines"]
    assert (line["max_quantity"], line["problem"], line["stock_note"]) == (2, None, None)
    patched = api.patch(f"/api/v1/cart/lines/{line['id']}/", {"quantity": 3}, format="json")
    assert patched.status_code == 409 and patched.json()["error"]["message"] == ONE_WAREHOUSE
    # The stock moves under the line: the cart says what it can have.
    _kettles(market, hamburg=1, munich=1)
    (line,) = api.get("/api/v1/cart/").json()["lines"]
    assert (line["max_quantity"], line["problem"]) == (1, "insufficient_stock")
    assert line["stock_note"] == "Only 1 can ship from one warehouse of Acme"


def test_checkout_refuses_when_only_the_warehouses_together_hold_the_line(market):
    _kettles(market, hamburg=3, munich=2)
    cart = market.cart()
    cart_line_add(cart=cart, offer=market.kettle, quantity=3)
    token = review_token(cart)
    warehouse_stock_set(offer=market.kettle, warehouse=market.hamburg, stock=2)
    for _ in range(2):  # and replayed: the same answer, nothing taken
        with pytest.raises(CheckoutChanged) as refused:
            place(cart, token=token)
        short = next(c for c in refused.value.changes if c["code"] == "insufficient_stock")
        assert short["max_quantity"] == 2
        kettles = (stock_at(market.kettle, market.hamburg), stock_at(market.kettle, market.munich))
        assert kettles == (2, 2)
    assert not Order.objects.exists()


@pytest.mark.parametrize("first", ["three", "one"])
def test_either_order_of_two_checkouts_never_sums_the_warehouses(market, first):
    """Both orders of the race in ``test_v2_race``, one after the other: Hamburg 3, Munich 2;
    a line of 3 and a kettle joining a monitor at Hamburg."""
    _kettles(market, hamburg=3, munich=2)
    carts = {"three": market.cart(), "one": market.cart()}
    cart_line_add(cart=carts["three"], offer=market.kettle, quantity=3)
    cart_line_add(cart=carts["one"], offer=market.monitor)
    cart_line_add(cart=carts["one"], offer=market.kettle)
    tokens = {name: review_token(cart) for name, cart in carts.items()}
    second = "one" if first == "three" else "three"
    place(carts[first], token=tokens[first])
    with pytest.raises(CheckoutChanged) as refused:
        place(carts[second], token=tokens[second])
    codes = {change["code"] for change in refused.value.changes}
    if first == "three":
        assert "warehouse_changed" in codes  # Munich could ship it: asked, not moved
        assert stock_at(market.kettle, market.hamburg) == 0
    else:
        assert codes == {"insufficient_stock", "total_changed"}  # the line leaves the total
        assert stock_at(market.kettle, market.hamburg) == 2
    assert stock_at(market.kettle, market.munich) == 2
    assert Order.objects.count() == 1
