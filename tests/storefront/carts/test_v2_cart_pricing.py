"""The cart's price on pricing contract version 2: a parcel per warehouse, the line's warehouse
chosen when it is added, version 1 merchants as before."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from storefront.carts.pricing_summary import (
    cart_pricing_summaries,
    cart_pricing_summary,
    cart_pricing_summary_via_sql,
)
from storefront.carts.services import cart_line_add, cart_line_set_offer
from storefront.errors import Conflict
from storefront.fulfillment.stock import warehouse_stock_set
from tests.storefront.carts.v2_market import v2_market

pytestmark = pytest.mark.django_db


@pytest.fixture
def market():
    return v2_market()


def _parcels(group):
    return [(p.warehouse_name, p.units, p.weight_g, p.fee) for p in group.parcels]


def test_adding_a_line_picks_the_cheapest_delivered_warehouse(market):
    cart = market.cart()
    monitor = cart_line_add(cart=cart, offer=market.monitor)
    assert monitor.warehouse_id == market.hamburg.pk  # the only one with stock
    # Hamburg: one parcel of 6.2 kg (499 + 300); Munich would add a second parcel (399).
    kettle = cart_line_add(cart=cart, offer=market.kettle)
    assert kettle.warehouse_id == market.hamburg.pk
    mug = cart_line_add(cart=cart, offer=market.mug)
    assert mug.warehouse_id == market.munich.pk


def test_alone_a_line_goes_to_the_cheaper_parcel(market):
    cart = market.cart()
    # Munich's flat 3.99 beats Hamburg's 4.99.
    assert cart_line_add(cart=cart, offer=market.kettle).warehouse_id == market.munich.pk
    # Two kettles: Munich has one, so Hamburg.
    assert cart_line_add(cart=cart, offer=market.kettle).warehouse_id == market.hamburg.pk


def test_the_summary_has_a_parcel_per_warehouse(market):
    cart = market.cart()
    for offer in (market.monitor, market.kettle, market.mug, market.kettle_bolt):
        if offer is not market.kettle_bolt:
            cart_line_add(cart=cart, offer=offer)
    summary = cart_pricing_summary(cart=cart)
    (acme,) = summary.groups
    assert acme.ships_from_warehouses
    assert _parcels(acme) == [("Hamburg", 2, 6200, 799), ("Munich", 1, 300, 399)]
    assert acme.shipping == 1198
    assert acme.total == 15000 + 2000 + 500 + 1198
    assert summary.total == acme.total
    line_warehouses = {line.line.product.name: line.warehouse_name for line in acme.lines}
    assert line_warehouses == {"Monitor": "Hamburg", "Kettle": "Hamburg", "Mug": "Munich"}
    via_sql = cart_pricing_summary_via_sql(cart=cart)
    assert [(g.merchant_id, g.total, _parcels(g)) for g in via_sql.groups] == [
        (g.merchant_id, g.total, _parcels(g)) for g in summary.groups
    ]


def test_free_shipping_makes_every_parcel_free(market):
    market.acme.free_over = 10000
    market.acme.save()
    cart = market.cart()
    cart_line_add(cart=cart, offer=market.monitor)
    cart_line_add(cart=cart, offer=market.mug)
    (acme,) = cart_pricing_summary(cart=cart).groups
    assert acme.shipping == 0
    assert [p.fee for p in acme.parcels] == [0, 0]
    assert acme.missing_for_free_shipping == 0


def test_a_v1_merchant_is_priced_as_before(market):
    cart = market.cart()
    cart_line_add(cart=cart, offer=market.kettle_bolt, quantity=2)
    (bolt,) = cart_pricing_summary(cart=cart).groups
    assert not bolt.ships_from_warehouses
    assert bolt.shipping == 499 + 100
    assert [(p.warehouse_id, p.units, p.fee) for p in bolt.parcels] == [(None, 2, 599)]
    assert bolt.lines[0].warehouse_id is None


def test_a_warehouse_run_short_falls_back_to_another_then_is_unavailable(market):
    cart = market.cart()
    line = cart_line_add(cart=cart, offer=market.kettle)
    assert line.warehouse_id == market.munich.pk
    warehouse_stock_set(offer=market.kettle, warehouse=market.munich, stock=0)
    summary = cart_pricing_summary(cart=cart)
    assert summary.groups[0].lines[0].warehouse_name == "Hamburg"
    warehouse_stock_set(offer=market.kettle, warehouse=market.hamburg, stock=0)
    summary = cart_pricing_summary(cart=cart)
    assert not summary.groups
    assert summary.unavailable[0].problem == "insufficient_stock"


def test_no_rate_for_the_destination_means_no_node(market):
    from storefront.models import ParcelRate

    ParcelRate.objects.filter(warehouse=market.munich).update(postal_prefix="8")
    cart = market.cart()
    with pytest.raises(Conflict) as error:
        cart_line_add(cart=cart, offer=market.mug)
    assert error.value.code == "insufficient_stock"
    assert cart_line_add(cart=cart, offer=market.kettle).warehouse_id == market.hamburg.pk


def test_switching_seller_picks_a_warehouse(market):
    cart = market.cart()
    line = cart_line_add(cart=cart, offer=market.kettle_bolt)
    assert line.warehouse_id is None
    line = cart_line_set_offer(cart=cart, line_id=line.pk, offer=market.kettle)
    assert line.warehouse_id == market.munich.pk
    line = cart_line_set_offer(cart=cart, line_id=line.pk, offer=market.kettle_bolt)
    assert line.warehouse_id is None


def test_summary_queries_are_bounded(market):
    """One query for v1 carts as before; three more for a destination with v2 lines,
    whatever the number of lines, merchants or carts."""
    v1 = market.cart()
    cart_line_add(cart=v1, offer=market.kettle_bolt)
    carts = [market.cart(), market.cart()]
    cart_line_add(cart=carts[0], offer=market.kettle)
    for cart in carts:
        cart_line_add(cart=cart, offer=market.monitor)
        cart_line_add(cart=cart, offer=market.mug)
    cart_pricing_summaries(carts=[v1, *carts])  # the zone index is built once a process
    with CaptureQueriesContext(connection) as v1_queries:
        cart_pricing_summary(cart=v1)
    with CaptureQueriesContext(connection) as v2_queries:
        cart_pricing_summaries(carts=carts)
    assert len(v1_queries) == 1
    assert len(v2_queries) == 1 + 3


def test_a_new_quantity_moves_the_line_to_a_warehouse_that_has_it(market):
    from storefront.carts.services import cart_line_set_quantity

    cart = market.cart()
    line = cart_line_add(cart=cart, offer=market.kettle)
    assert line.warehouse_id == market.munich.pk
    line = cart_line_set_quantity(cart=cart, line_id=line.pk, quantity=3)
    assert line.warehouse_id == market.hamburg.pk  # Munich has one
    line = cart_line_set_quantity(cart=cart, line_id=line.pk, quantity=1)
    assert line.warehouse_id == market.munich.pk
    with pytest.raises(Conflict):  # six in all, but no warehouse has six
        cart_line_set_quantity(cart=cart, line_id=line.pk, quantity=6)
