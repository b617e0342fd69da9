"""Improve cart on pricing contract version 2: the cart's problem has a column per warehouse,
a suggestion names each line's warehouse and each merchant's parcels, applying sets both."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from smartcart import services
from smartcart.selectors import cart_current_total, cart_problem_build
from storefront.carts.pricing_summary import cart_pricing_summary
from storefront.carts.services import cart_line_add
from storefront.errors import Conflict
from storefront.models import CartLine, WarehouseStock
from tests.factories import OfferFactory
from tests.storefront.carts.v2_market import v2_market

pytestmark = pytest.mark.django_db


@pytest.fixture
def market():
    return v2_market()


def _solve(cart):
    run = services.optimization_run_create(cart=cart, requested_by=cart.owner)
    assert run.status == run.Status.DONE, run.error
    return run


def test_the_problem_has_a_column_per_warehouse_and_maps_back(market):
    cart = market.cart()
    kettle = cart_line_add(cart=cart, offer=market.kettle)
    cart_line_add(cart=cart, offer=market.monitor)
    build = cart_problem_build(cart=cart)
    spec = build.problem.to_dict()
    merchants = {m["id"]: m for m in spec["merchants"]}
    acme = merchants[str(market.acme.pk)]
    assert [node["id"] for node in acme["nodes"]] == [str(market.hamburg.pk), str(market.munich.pk)]
    hamburg = acme["nodes"][0]["shipping"]
    assert hamburg["weight_tiers"] == [{"up_to_g": 2000, "fee": 0}, {"up_to_g": 10000, "fee": 300}]
    assert hamburg["per_kg_over"] == 150
    # Bolt (version 1) is one node named by the merchant.
    assert str(market.bolt.pk) in merchants
    assert build.current_warehouses[kettle.pk] == market.munich.pk
    assert build.warehouse_of(market.acme.pk, str(market.hamburg.pk)) == market.hamburg.pk
    assert build.warehouse_of(market.bolt.pk, str(market.bolt.pk)) is None
    # Kettle (1.2 kg) alone at Munich (3.99) + monitor at Hamburg (5 kg: 4.99 + 3.00).
    assert cart_current_total(cart=cart) == 2000 + 15000 + 399 + 799
    assert cart_current_total(cart=cart) == cart_pricing_summary(cart=cart).total


def test_problem_build_reads_three_more_queries_for_warehouses(market):
    v1 = market.cart()  # a product no version 2 merchant sells: as before, two queries
    cart_line_add(cart=v1, offer=OfferFactory(merchant=market.bolt))
    v2 = market.cart()
    for offer in (market.kettle, market.monitor, market.mug):
        cart_line_add(cart=v2, offer=offer)
    cart_problem_build(cart=v1), cart_problem_build(cart=v2)  # compiled once a process
    with CaptureQueriesContext(connection) as v1_queries:
        cart_problem_build(cart=v1)
    with CaptureQueriesContext(connection) as v2_queries:
        cart_problem_build(cart=v2)
    assert (len(v1_queries), len(v2_queries)) == (2, 5)


def test_improve_joins_two_parcels_of_one_merchant_and_apply_moves_the_warehouse(market):
    cart = market.cart()
    kettle = cart_line_add(cart=cart, offer=market.kettle)  # alone: Munich is cheaper
    cart_line_add(cart=cart, offer=market.monitor)  # Hamburg only
    run = _solve(cart)
    assert (run.current_total, run.suggested_total) == (18198, 17799)
    rows = {row["line_id"]: row for row in run.suggestion["lines"]}
    row = rows[kettle.pk]
    assert row["changed"] and row["old_offer_id"] == row["new_offer_id"]
    assert (row["old_warehouse_id"], row["new_warehouse_id"]) == (
        market.munich.pk,
        market.hamburg.pk,
    )
    assert row["new_warehouse_name"] == "Hamburg"
    (acme,) = run.suggestion["merchants"]
    assert [
        (p["warehouse_id"], p["warehouse_name"], p["units"], p["weight_g"], p["fee"])
        for p in acme["parcels"]
    ] == [(market.hamburg.pk, "Hamburg", 2, 6200, 799)]
    assert len(run.suggestion["current_merchants"][0]["parcels"]) == 2
    applied = services.optimization_run_apply_outcome(run=run, user=cart.owner)
    assert applied.total == 17799 and applied.saved == 399
    assert CartLine.objects.get(pk=kettle.pk).warehouse_id == market.hamburg.pk
    (group,) = cart_pricing_summary(cart=cart).groups
    assert [(p.warehouse_name, p.fee) for p in group.parcels] == [("Hamburg", 799)]


def test_improve_moves_a_v1_line_to_a_warehouse(market):
    cart = market.cart()
    cart_line_add(cart=cart, offer=market.monitor)
    bolt = cart_line_add(cart=cart, offer=market.kettle_bolt)
    run = _solve(cart)
    # Bolt: 21.00 + 4.99; at Acme's Hamburg the kettle rides in the monitor's parcel.
    assert run.savings == 2100 + 499 - 2000
    row = next(row for row in run.suggestion["lines"] if row["line_id"] == bolt.pk)
    assert (row["old_warehouse_id"], row["new_merchant_id"]) == (None, market.acme.pk)
    assert row["new_warehouse_id"] in (market.hamburg.pk, market.munich.pk)
    services.optimization_run_apply(run=run, user=cart.owner)
    line = CartLine.objects.get(pk=bolt.pk)
    assert (line.offer_id, line.warehouse_id) == (market.kettle.pk, row["new_warehouse_id"])
    assert cart_current_total(cart=cart) == run.suggested_total


def test_apply_refuses_when_the_suggested_warehouse_ran_out(market):
    cart = market.cart()
    cart_line_add(cart=cart, offer=market.kettle)
    cart_line_add(cart=cart, offer=market.monitor)
    run = _solve(cart)
    WarehouseStock.objects.filter(offer=market.kettle, warehouse=market.hamburg).update(stock=0)
    with pytest.raises(Conflict) as error:
        services.optimization_run_apply(run=run, user=cart.owner)
    assert error.value.code == "stock_changed"


def test_a_line_short_at_every_warehouse_is_moved_to_another_merchant(market):
    cart = market.cart()
    kettle = cart_line_add(cart=cart, offer=market.kettle, quantity=2)  # Hamburg has 5
    WarehouseStock.objects.filter(offer=market.kettle, warehouse=market.hamburg).update(stock=1)
    with pytest.raises(Conflict):
        cart_problem_build(cart=cart)
    build = cart_problem_build(cart=cart, sold_out_allowed=True)
    assert kettle.pk in build.sold_out
    run = _solve(cart)
    row = run.suggestion["lines"][0]
    assert (row["new_merchant_id"], row["new_warehouse_id"]) == (market.bolt.pk, None)
