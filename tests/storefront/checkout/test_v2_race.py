"""Two shoppers racing for the last unit at one warehouse, on PostgreSQL (row locks)."""

import pytest

from storefront.carts.services import cart_line_add
from storefront.checkout.review import CheckoutChanged
from storefront.fulfillment.stock import warehouse_stock_set
from storefront.models import Order, OrderLine, WarehouseStock
from storefront.orders.services import order_cancel
from tests.storefront.carts.v2_market import hamburg_costs_as_munich, stock_at, v2_market
from tests.storefront.orders.conftest import place, review_token
from tests.storefront.race_support import POSTGRES_RACE_MARKS, race

pytestmark = POSTGRES_RACE_MARKS


def test_two_shoppers_for_the_last_unit_at_one_warehouse():
    market = v2_market()
    # Munich has the one kettle with the cheaper parcel; Hamburg has none left.
    WarehouseStock.objects.filter(offer=market.kettle, warehouse=market.hamburg).update(stock=0)
    carts = [market.cart(), market.cart()]
    for cart in carts:
        assert cart_line_add(cart=cart, offer=market.kettle).warehouse_id == market.munich.pk
    tokens = [review_token(cart) for cart in carts]
    results = race([lambda c=c, t=t: place(c, token=t) for c, t in zip(carts, tokens, strict=True)])
    orders = [r for r in results if isinstance(r, Order)]
    refused = [r for r in results if isinstance(r, CheckoutChanged)]
    assert len(orders) == 1 and len(refused) == 1, results
    assert "insufficient_stock" in {change["code"] for change in refused[0].changes}
    assert stock_at(market.kettle, market.munich) == 0
    market.kettle.refresh_from_db()
    assert market.kettle.stock == 0
    # Cancelled twice at once: the unit comes back once, to Munich.
    (order,) = orders
    race([lambda: order_cancel(order=order, by=order.owner)] * 2)
    assert stock_at(market.kettle, market.munich) == 1
    assert stock_at(market.kettle, market.hamburg) == 0
    market.kettle.refresh_from_db()
    assert market.kettle.stock == 1


def test_the_loser_of_the_last_unit_at_one_warehouse_confirms_the_other_warehouse():
    """Hamburg ships a kettle for what Munich does: the shopper who loses Munich's last unit
    is asked (409, ``warehouse_changed`` alone: the total is the same) before anything ships
    from Hamburg; reviewed again, the order ships from there."""
    market = v2_market()
    carts = [market.cart(), market.cart()]
    for cart in carts:
        assert cart_line_add(cart=cart, offer=market.kettle).warehouse_id == market.munich.pk
    hamburg_costs_as_munich(market)
    tokens = [review_token(cart) for cart in carts]
    results = race([lambda c=c, t=t: place(c, token=t) for c, t in zip(carts, tokens, strict=True)])
    orders = [r for r in results if isinstance(r, Order)]
    refused = [r for r in results if isinstance(r, CheckoutChanged)]
    assert len(orders) == 1 and len(refused) == 1, results
    assert [change["code"] for change in refused[0].changes] == ["warehouse_changed"]
    assert refused[0].changes[0]["new_name"] == "Hamburg"
    assert (stock_at(market.kettle, market.munich), stock_at(market.kettle, market.hamburg)) == (
        0,
        5,
    )
    loser = carts[results.index(refused[0])]
    second = place(loser, token=review_token(loser))
    lines = OrderLine.objects.filter(merchant_order__order__in=[orders[0], second])
    assert sorted(lines.values_list("warehouse_id", flat=True)) == sorted(
        [market.munich.pk, market.hamburg.pk]
    )
    # Both cancelled, each twice at once: each unit goes back once, to where it shipped from.
    race([lambda o=o: order_cancel(order=o, by=o.owner) for o in (orders[0], second) * 2])
    assert (stock_at(market.kettle, market.munich), stock_at(market.kettle, market.hamburg)) == (
        1,
        5,
    )


def test_three_kettles_racing_one_never_take_the_two_warehouses_together():
    """Hamburg has 3 kettles, Munich 2. One shopper's line of 3 races another's kettle that
    joins a monitor at Hamburg: whoever loses is refused, and the line of 3 is never made up
    from both warehouses (their 4 together)."""
    market = v2_market()
    warehouse_stock_set(offer=market.kettle, warehouse=market.hamburg, stock=3)
    warehouse_stock_set(offer=market.kettle, warehouse=market.munich, stock=2)
    three, one = market.cart(), market.cart()
    assert cart_line_add(cart=three, offer=market.kettle, quantity=3).warehouse_id == (
        market.hamburg.pk
    )
    cart_line_add(cart=one, offer=market.monitor)
    assert cart_line_add(cart=one, offer=market.kettle).warehouse_id == market.hamburg.pk
    tokens = [review_token(three), review_token(one)]
    results = race([lambda: place(three, token=tokens[0]), lambda: place(one, token=tokens[1])])
    orders = [r for r in results if isinstance(r, Order)]
    refused = [r for r in results if isinstance(r, CheckoutChanged)]
    assert len(orders) == 1 and len(refused) == 1, results
    codes = {change["code"] for change in refused[0].changes}
    if isinstance(results[0], Order):  # the 3 went first: the other kettle would move
        assert "warehouse_changed" in codes
        assert stock_at(market.kettle, market.hamburg) == 0
    else:  # the 1 went first: 2 left at each, none has 3
        (short,) = [c for c in refused[0].changes if c["code"] == "insufficient_stock"]
        assert short["max_quantity"] == 2
        assert stock_at(market.kettle, market.hamburg) == 2
    assert stock_at(market.kettle, market.munich) == 2
    # The loser's page posted again: refused again, nothing moves.
    loser = (three, one)[results.index(refused[0])]
    with pytest.raises(CheckoutChanged):
        place(loser, token=tokens[results.index(refused[0])])
    assert stock_at(market.kettle, market.munich) == 2
    assert Order.objects.count() == 1
