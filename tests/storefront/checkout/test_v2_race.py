"""Two shoppers racing for the last unit at one warehouse, on PostgreSQL (row locks)."""

from storefront.carts.services import cart_line_add
from storefront.checkout.review import CheckoutChanged
from storefront.models import Order, WarehouseStock
from storefront.orders.services import order_cancel
from tests.storefront.carts.v2_market import stock_at, v2_market
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
