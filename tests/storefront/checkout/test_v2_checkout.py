"""Checkout on pricing contract version 2: stock taken from the line's warehouse (the offer's
total in step), packages with their parcels, stock given back to the same warehouse."""

import pytest

from storefront.carts.services import cart_line_add
from storefront.errors import Conflict
from storefront.models import MerchantOrder, Offer, Order, OrderLine, WarehouseStock
from storefront.orders.services import merchant_order_cancel_by_shopper, order_cancel
from storefront.orders.status import packages_cancel
from tests.factories import OfferFactory
from tests.storefront.carts.v2_market import stock_at, v2_market
from tests.storefront.orders.conftest import place

pytestmark = pytest.mark.django_db


@pytest.fixture
def market():
    return v2_market()


def _total(offer):
    return Offer.objects.get(pk=offer.pk).stock


@pytest.fixture
def order(market):
    cart = market.cart()
    cart_line_add(cart=cart, offer=market.monitor)
    cart_line_add(cart=cart, offer=market.kettle, quantity=2)
    cart_line_add(cart=cart, offer=market.mug, quantity=3)
    cart_line_add(cart=cart, offer=OfferFactory(merchant=market.bolt, stock=4))
    return place(cart)


def test_placing_takes_stock_at_the_chosen_warehouses(market, order):
    assert stock_at(market.monitor, market.hamburg) == 1
    assert stock_at(market.kettle, market.hamburg) == 3
    assert stock_at(market.kettle, market.munich) == 1
    assert stock_at(market.mug, market.munich) == 7
    assert (_total(market.monitor), _total(market.kettle), _total(market.mug)) == (1, 4, 7)
    lines = {line.product_name: line.warehouse_id for line in OrderLine.objects.all()}
    bolt_line = OrderLine.objects.get(merchant_order__merchant=market.bolt)
    assert lines == {
        "Monitor": market.hamburg.pk,
        "Kettle": market.hamburg.pk,
        "Mug": market.munich.pk,
        bolt_line.product_name: None,
    }
    assert _total(bolt_line.offer) == 3


def test_the_package_keeps_its_parcels(market, order):
    acme = order.merchant_orders.get(merchant=market.acme)
    assert acme.parcels == [
        {
            "warehouse_id": market.hamburg.pk,
            "warehouse_name": "Hamburg",
            "units": 3,
            "weight_g": 7400,
            "weight_kg": "7.4",
            "fee": 799,
        },
        {
            "warehouse_id": market.munich.pk,
            "warehouse_name": "Munich",
            "units": 3,
            "weight_g": 900,
            "weight_kg": "0.9",
            "fee": 399,
        },
    ]
    assert acme.shipping == 799 + 399
    (bolt,) = order.merchant_orders.get(merchant=market.bolt).parcels
    assert (bolt["warehouse_id"], bolt["units"], bolt["fee"]) == (None, 1, 499)
    assert order.total == sum(order.merchant_orders.values_list("cost", flat=True))


def test_a_kettle_split_over_two_warehouses_is_not_possible_in_one_line(market):
    cart = market.cart()
    # Munich has 1, Hamburg 5: six kettles fit nowhere (a line ships whole from one node).
    warehouse_total = _total(market.kettle)
    assert warehouse_total == 6
    with pytest.raises(Conflict):
        cart_line_add(cart=cart, offer=market.kettle, quantity=6)


def test_cancel_gives_stock_back_to_the_same_warehouse_once(market, order):
    order_cancel(order=order, by=order.owner)
    assert stock_at(market.monitor, market.hamburg) == 2
    assert stock_at(market.mug, market.munich) == 10
    assert (stock_at(market.kettle, market.hamburg), stock_at(market.kettle, market.munich)) == (
        5,
        1,
    )
    assert (_total(market.kettle), _total(market.mug)) == (6, 10)
    # Replayed: nothing more comes back.
    with pytest.raises(Conflict):
        order_cancel(order=order, by=order.owner)
    packages_cancel(order, reason="replayed", by=None)
    assert stock_at(market.mug, market.munich) == 10
    assert _total(market.monitor) == 2


def test_package_cancels_out_of_order_and_twice(market, order):
    bolt = order.merchant_orders.get(merchant=market.bolt)
    acme = order.merchant_orders.get(merchant=market.acme)
    merchant_order_cancel_by_shopper(order=order, merchant_order_id=acme.pk, by=order.owner)
    assert stock_at(market.mug, market.munich) == 10
    with pytest.raises(Conflict):
        merchant_order_cancel_by_shopper(order=order, merchant_order_id=acme.pk, by=order.owner)
    merchant_order_cancel_by_shopper(order=order, merchant_order_id=bolt.pk, by=order.owner)
    assert stock_at(market.mug, market.munich) == 10
    assert stock_at(market.monitor, market.hamburg) == 2
    order.refresh_from_db()
    assert order.status == Order.Status.CANCELLED
    assert set(order.merchant_orders.values_list("status", flat=True)) == {
        MerchantOrder.Status.CANCELLED
    }


def test_a_warehouse_that_stopped_selling_the_offer_gets_nothing_back(market, order):
    WarehouseStock.objects.filter(offer=market.mug, warehouse=market.munich).delete()
    order_cancel(order=order, by=order.owner)
    assert stock_at(market.monitor, market.hamburg) == 2
    assert not WarehouseStock.objects.filter(offer=market.mug).exists()


def test_the_confirmation_mail_lists_the_parcels(market, order, mailoutbox):
    from storefront.orders.emails import order_confirmation_mail_send

    Order.objects.filter(pk=order.pk).update(status=Order.Status.PAID)
    assert order_confirmation_mail_send(order_id=order.pk)
    (mail,) = mailoutbox
    assert "Ships from Hamburg · 3 items · 7.4 kg · €7.99" in mail.body
    assert "Ships from Munich · 3 items · 0.9 kg · €3.99" in mail.body
