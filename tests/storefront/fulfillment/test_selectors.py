"""What a cart problem reads of version 2 merchants: nodes and rates for a destination, stock
per node, in a fixed number of queries."""

import pytest

from storefront.fulfillment.selectors import (
    FulfillmentNode,
    merchant_ids_with_warehouses,
    merchant_nodes_for_destination,
    merchant_offers_without_stock_rows,
    offer_stock_by_warehouse,
)
from tests.factories import MerchantFactory, OfferFactory
from tests.storefront.fulfillment.factories import (
    ParcelRateFactory,
    WarehouseFactory,
    WarehouseStockFactory,
    WeightTierFactory,
)

pytestmark = pytest.mark.django_db


def test_version_1_merchants_are_left_out():
    v1 = MerchantFactory()
    inactive_only = WarehouseFactory(active=False).merchant
    assert (
        merchant_nodes_for_destination(merchant_ids=[v1.pk, inactive_only.pk], postal_code="20095")
        == {}
    )
    assert merchant_ids_with_warehouses(merchant_ids=[v1.pk, inactive_only.pk]) == set()


def test_longest_prefix_wins_per_warehouse_with_its_tiers_in_order():
    hamburg = WarehouseFactory(name="Hamburg")
    munich = WarehouseFactory(name="Munich", merchant=hamburg.merchant)
    everywhere = ParcelRateFactory(warehouse=hamburg, postal_prefix="", base_fee=500)
    WeightTierFactory(rate=everywhere, up_to_g=10000, fee=300)
    WeightTierFactory(rate=everywhere, up_to_g=2000, fee=0)
    north = ParcelRateFactory(warehouse=hamburg, postal_prefix="2", base_fee=300, per_kg_over=50)
    WeightTierFactory(rate=north, up_to_g=31500, fee=700)
    ParcelRateFactory(warehouse=hamburg, postal_prefix="21", base_fee=1)  # does not match 20095
    ParcelRateFactory(warehouse=munich, postal_prefix="8", base_fee=399, per_extra_unit=0)

    north_nodes = merchant_nodes_for_destination(
        merchant_ids=[hamburg.merchant_id], postal_code="20 095"
    )
    assert north_nodes == {
        hamburg.merchant_id: (
            FulfillmentNode(
                warehouse_id=hamburg.pk,
                name="Hamburg",
                base_fee=300,
                per_extra_unit=100,
                tiers=((31500, 700),),
                per_kg_over=50,
                postal_prefix="2",
            ),
        )
    }
    south = merchant_nodes_for_destination(merchant_ids=[hamburg.merchant_id], postal_code="80331")
    (first, second) = south[hamburg.merchant_id]
    assert (first.warehouse_id, first.base_fee, first.tiers) == (
        hamburg.pk,
        500,
        ((2000, 0), (10000, 300)),
    )
    assert (second.warehouse_id, second.base_fee, second.tiers) == (munich.pk, 399, ())


def test_a_version_2_merchant_that_ships_nowhere_here_has_no_nodes():
    warehouse = WarehouseFactory()
    ParcelRateFactory(warehouse=warehouse, postal_prefix="8")
    assert merchant_nodes_for_destination(
        merchant_ids=[warehouse.merchant_id], postal_code="10115"
    ) == {warehouse.merchant_id: ()}


def test_inactive_warehouses_are_not_nodes():
    active = WarehouseFactory()
    off = WarehouseFactory(merchant=active.merchant, active=False)
    ParcelRateFactory(warehouse=active)
    ParcelRateFactory(warehouse=off)
    nodes = merchant_nodes_for_destination(merchant_ids=[active.merchant_id], postal_code=None)
    assert [node.warehouse_id for node in nodes[active.merchant_id]] == [active.pk]


def test_two_queries_whatever_the_number_of_merchants(django_assert_num_queries):
    merchant_ids = []
    for _ in range(6):
        warehouse = WarehouseFactory()
        rate = ParcelRateFactory(warehouse=warehouse)
        WeightTierFactory(rate=rate)
        ParcelRateFactory(warehouse=WarehouseFactory(merchant=warehouse.merchant))
        merchant_ids.append(warehouse.merchant_id)
    with django_assert_num_queries(2):
        nodes = merchant_nodes_for_destination(merchant_ids=merchant_ids, postal_code="12345")
    assert all(len(found) == 2 for found in nodes.values()) and len(nodes) == 6
    with django_assert_num_queries(0):
        assert merchant_nodes_for_destination(merchant_ids=[], postal_code="1") == {}


def test_stock_per_warehouse_of_active_warehouses(django_assert_num_queries):
    row = WarehouseStockFactory(stock=4)
    offer = row.offer
    WarehouseStockFactory(offer=offer, warehouse__merchant=offer.merchant, stock=None)
    WarehouseStockFactory(offer=offer, warehouse__merchant=offer.merchant, warehouse__active=False)
    other = OfferFactory()
    with django_assert_num_queries(1):
        found = offer_stock_by_warehouse(offer_ids=[offer.pk, other.pk])
    assert list(found) == [offer.pk]
    assert sorted(found[offer.pk].values(), key=str) == [4, None]
    assert found[offer.pk][row.warehouse_id] == 4


def test_offers_without_stock_rows():
    row = WarehouseStockFactory()
    unstocked = OfferFactory(merchant=row.warehouse.merchant)
    assert list(merchant_offers_without_stock_rows(merchant_id=row.warehouse.merchant_id)) == [
        unstocked
    ]
