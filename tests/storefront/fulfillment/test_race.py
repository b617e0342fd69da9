"""Stock per warehouse under concurrency, on PostgreSQL (row locks; SQLite has none to test):
a merchant's edits and checkout's moves never lose each other's change, and the offer's total
stays the sum of its warehouses."""

import pytest
from django.db import transaction

from storefront.fulfillment.services import warehouse_create
from storefront.fulfillment.stock import warehouse_stock_move, warehouse_stock_set
from storefront.models import Offer, WarehouseStock
from tests.factories import OfferFactory
from tests.storefront.race_support import POSTGRES_RACE_MARKS, race

pytestmark = POSTGRES_RACE_MARKS


def _checkout_take(offer, warehouse, units):
    # What checkout does: the offer's row lock first, then the move at the warehouse.
    with transaction.atomic():
        list(Offer.objects.select_for_update().filter(pk=offer.pk))
        warehouse_stock_move(moves={(offer.pk, warehouse.pk): -units})


@pytest.mark.parametrize("rounds", [8])
def test_edits_and_orders_at_once_keep_the_total(rounds):
    offer = OfferFactory(stock=None)
    hamburg = warehouse_create(merchant=offer.merchant, name="Hamburg", adopt=False)
    munich = warehouse_create(merchant=offer.merchant, name="Munich", adopt=False)
    leipzig = warehouse_create(merchant=offer.merchant, name="Leipzig", adopt=False)
    warehouse_stock_set(offer=offer, warehouse=hamburg, stock=100)
    for round_ in range(rounds):
        results = race(
            [
                lambda n=round_: warehouse_stock_set(offer=offer, warehouse=munich, stock=n),
                lambda n=round_: warehouse_stock_set(offer=offer, warehouse=leipzig, stock=2 * n),
                lambda: _checkout_take(offer, hamburg, 1),
                lambda: _checkout_take(offer, hamburg, 1),
            ]
        )
        assert not [r for r in results if isinstance(r, Exception)], results
        rows = dict(
            WarehouseStock.objects.filter(offer=offer).values_list("warehouse__name", "stock")
        )
        assert rows == {"Hamburg": 100 - 2 * (round_ + 1), "Munich": round_, "Leipzig": 2 * round_}
        assert Offer.objects.get(pk=offer.pk).stock == sum(rows.values())
