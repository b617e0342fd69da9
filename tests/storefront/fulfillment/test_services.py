"""Warehouses, stock per warehouse, parcel rates and weights: the writes keep ``Offer.stock``
the total and tell the price watch and the caches (``offers_changed``)."""

import pytest
from django.db import transaction

from storefront.errors import Conflict, ValidationFailed
from storefront.fulfillment.services import (
    parcel_rate_create,
    parcel_rate_delete,
    parcel_rate_set,
    parcel_rate_update,
    product_weight_set,
    warehouse_create,
    warehouse_delete,
    warehouse_update,
)
from storefront.fulfillment.stock import (
    offer_stock_totals,
    warehouse_stock_move,
    warehouse_stock_remove,
    warehouse_stock_set,
)
from storefront.models import CheapestOfferRefresh, Offer, ParcelRate, WarehouseStock
from tests.factories import MerchantFactory, OfferFactory, ProductFactory, ShippingZoneFactory
from tests.storefront.fulfillment.factories import WarehouseFactory

pytestmark = pytest.mark.django_db


def stock_of(offer: Offer) -> int | None:
    return Offer.objects.values_list("stock", flat=True).get(pk=offer.pk)


class TestWarehouses:
    def test_the_first_warehouse_adopts_the_merchants_stock_and_shipping(
        self, sent, django_capture_on_commit_callbacks
    ):
        merchant = MerchantFactory(base_fee=499, per_extra_unit=100)
        ShippingZoneFactory(merchant=merchant, postal_prefix="8", base_fee=299, per_extra_unit=50)
        counted, unlimited = (
            OfferFactory(merchant=merchant, stock=7),
            OfferFactory(merchant=merchant),
        )
        with django_capture_on_commit_callbacks(execute=True):
            hamburg = warehouse_create(merchant=merchant, name=" Hamburg ", postal_code="20095")
        assert hamburg.name == "Hamburg"
        rows = dict(WarehouseStock.objects.filter(warehouse=hamburg).values_list("offer", "stock"))
        assert rows == {counted.pk: 7, unlimited.pk: None}
        rates = ParcelRate.objects.filter(warehouse=hamburg).order_by("postal_prefix")
        assert [(r.postal_prefix, r.base_fee, r.per_extra_unit) for r in rates] == [
            ("", 499, 100),
            ("8", 299, 50),
        ]
        assert (stock_of(counted), stock_of(unlimited)) == (7, None)
        assert sent == [(set(), {merchant.pk})]
        # A second warehouse adopts nothing: its offers are sold from it once stocked there.
        munich = warehouse_create(merchant=merchant, name="Munich")
        assert not WarehouseStock.objects.filter(warehouse=munich).exists()
        assert not ParcelRate.objects.filter(warehouse=munich).exists()

    def test_without_adoption_unstocked_offers_sell_nowhere(self):
        offer = OfferFactory(stock=None)
        warehouse_create(merchant=offer.merchant, name="Leipzig", adopt=False)
        assert stock_of(offer) == 0

    def test_an_inactive_warehouse_changes_nothing(self):
        offer = OfferFactory(stock=3)
        warehouse_create(merchant=offer.merchant, name="Spare", active=False)
        assert stock_of(offer) == 3 and not WarehouseStock.objects.exists()

    def test_names_are_unique_per_merchant(self):
        warehouse = WarehouseFactory(name="Hamburg")
        with pytest.raises(ValidationFailed):
            warehouse_create(merchant=warehouse.merchant, name="Hamburg")
        warehouse_create(merchant=MerchantFactory(), name="Hamburg")

    def test_switching_warehouses_moves_the_totals(self, sent, django_capture_on_commit_callbacks):
        offer = OfferFactory(stock=None)
        hamburg = warehouse_create(merchant=offer.merchant, name="Hamburg", adopt=False)
        munich = warehouse_create(merchant=offer.merchant, name="Munich", adopt=False)
        warehouse_stock_set(offer=offer, warehouse=hamburg, stock=2)
        warehouse_stock_set(offer=offer, warehouse=munich, stock=5)
        assert stock_of(offer) == 7
        sent.clear()
        with django_capture_on_commit_callbacks(execute=True):
            warehouse_update(warehouse=munich, active=False)
        assert stock_of(offer) == 2
        assert sent == [({offer.product_id}, {offer.merchant_id})]
        # The last one off: version 1 again, with the total it had.
        warehouse_update(warehouse=hamburg, active=False)
        assert stock_of(offer) == 2
        assert offer_stock_totals(offer_ids=[offer.pk]) == {}
        warehouse_update(warehouse=munich, active=True, name="München")
        assert stock_of(offer) == 5

    def test_deleting_a_warehouse_takes_its_stock(self):
        offer = OfferFactory()
        hamburg = warehouse_create(merchant=offer.merchant, name="Hamburg", adopt=False)
        munich = warehouse_create(merchant=offer.merchant, name="Munich", adopt=False)
        warehouse_stock_set(offer=offer, warehouse=hamburg, stock=2)
        warehouse_stock_set(offer=offer, warehouse=munich, stock=None)
        assert stock_of(offer) is None
        warehouse_delete(warehouse=munich)
        assert stock_of(offer) == 2


class TestStock:
    def test_the_total_is_the_sum_or_unlimited(self, sent, django_capture_on_commit_callbacks):
        offer = OfferFactory(stock=1)
        hamburg = warehouse_create(merchant=offer.merchant, name="Hamburg", adopt=False)
        munich = warehouse_create(merchant=offer.merchant, name="Munich", adopt=False)
        CheapestOfferRefresh.objects.all().delete()
        sent.clear()
        with django_capture_on_commit_callbacks(execute=True):
            row = warehouse_stock_set(offer=offer, warehouse=hamburg, stock=4)
        assert (row.stock, offer.stock, stock_of(offer)) == (4, 4, 4)
        assert sent == [({offer.product_id}, set())]
        assert CheapestOfferRefresh.objects.filter(product_id=offer.product_id).exists()
        warehouse_stock_set(offer=offer, warehouse=munich, stock=None)
        assert stock_of(offer) is None
        assert warehouse_stock_remove(offer=offer, warehouse=munich) is True
        assert warehouse_stock_remove(offer=offer, warehouse=munich) is False
        assert stock_of(offer) == 4

    def test_moving_stock_between_warehouses_is_a_change_too(
        self, sent, django_capture_on_commit_callbacks
    ):
        offer = OfferFactory()
        hamburg = warehouse_create(merchant=offer.merchant, name="Hamburg", adopt=False)
        munich = warehouse_create(merchant=offer.merchant, name="Munich", adopt=False)
        warehouse_stock_set(offer=offer, warehouse=hamburg, stock=3)
        warehouse_stock_set(offer=offer, warehouse=munich, stock=0)
        sent.clear()
        # A transaction of the test's own: the services' decorated blocks are reused objects.
        with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
            warehouse_stock_set(offer=offer, warehouse=hamburg, stock=0)
            warehouse_stock_set(offer=offer, warehouse=munich, stock=3)
        assert stock_of(offer) == 3
        # One notice for the one transaction, though the total stayed 3.
        assert sent == [({offer.product_id}, set())]

    def test_another_merchants_warehouse_is_refused(self):
        offer = OfferFactory()
        foreign = WarehouseFactory()
        with pytest.raises(ValidationFailed) as raised:
            warehouse_stock_set(offer=offer, warehouse=foreign, stock=1)
        assert raised.value.field == "warehouse"
        assert not WarehouseStock.objects.exists()

    def test_negative_stock_is_refused(self):
        offer = OfferFactory()
        warehouse = warehouse_create(merchant=offer.merchant, name="Hamburg", adopt=False)
        with pytest.raises(ValidationFailed):
            warehouse_stock_set(offer=offer, warehouse=warehouse, stock=-1)

    def test_checkout_moves_stock_at_a_warehouse_and_the_total(self):
        offer = OfferFactory()
        other = OfferFactory(merchant=offer.merchant)
        hamburg = warehouse_create(merchant=offer.merchant, name="Hamburg", adopt=False)
        munich = warehouse_create(merchant=offer.merchant, name="Munich", adopt=False)
        warehouse_stock_set(offer=offer, warehouse=hamburg, stock=3)
        warehouse_stock_set(offer=offer, warehouse=munich, stock=2)
        warehouse_stock_set(offer=other, warehouse=munich, stock=None)
        warehouse_stock_move(moves={(offer.pk, hamburg.pk): -3, (other.pk, munich.pk): -5})
        assert stock_of(offer) == 2 and stock_of(other) is None
        with pytest.raises(Conflict) as raised:
            warehouse_stock_move(moves={(offer.pk, munich.pk): -1, (offer.pk, hamburg.pk): -1})
        assert raised.value.code == "out_of_stock"
        assert stock_of(offer) == 2  # nothing moved
        with pytest.raises(Conflict) as raised:
            warehouse_stock_move(moves={(other.pk, hamburg.pk): -1})
        assert raised.value.code == "not_at_warehouse"
        warehouse_stock_move(moves={(offer.pk, hamburg.pk): 1})  # a package cancelled
        assert stock_of(offer) == 3


class TestParcelRates:
    def test_tiers_are_stored_in_order_and_must_increase(
        self, sent, django_capture_on_commit_callbacks
    ):
        warehouse = WarehouseFactory()
        with django_capture_on_commit_callbacks(execute=True):
            rate = parcel_rate_create(
                warehouse=warehouse,
                postal_prefix="sw1 a",
                base_fee=499,
                per_kg_over=50,
                tiers=[(2000, 0), (10000, 300), (31500, 700)],
            )
        assert rate.postal_prefix == "SW1A"
        assert list(rate.tiers.values_list("up_to_g", "fee")) == [
            (2000, 0),
            (10000, 300),
            (31500, 700),
        ]
        assert sent == [(set(), {warehouse.merchant_id})]
        for bad in ([(2000, 0), (2000, 1)], [(5000, 0), (1000, 0)], [(-1, 0)], [(10, 1.5)]):
            with pytest.raises(ValidationFailed) as raised:
                parcel_rate_update(rate=rate, tiers=bad)
            assert raised.value.field == "tiers"
        assert rate.tiers.count() == 3

    def test_set_replaces_the_rate_of_a_prefix(self):
        warehouse = WarehouseFactory()
        first = parcel_rate_set(warehouse=warehouse, postal_prefix="8", tiers=[(1000, 100)])
        again = parcel_rate_set(warehouse=warehouse, postal_prefix="8", base_fee=1, tiers=[])
        assert again.pk == first.pk and again.base_fee == 1 and again.tiers.count() == 0
        parcel_rate_delete(rate=again)
        assert not ParcelRate.objects.exists()

    def test_one_rate_per_prefix_and_no_absurd_fee_per_kg(self):
        warehouse = WarehouseFactory()
        parcel_rate_create(warehouse=warehouse, postal_prefix="1")
        with pytest.raises(ValidationFailed):
            parcel_rate_create(warehouse=warehouse, postal_prefix="1")
        with pytest.raises(ValidationFailed):
            parcel_rate_create(warehouse=warehouse, postal_prefix="2", per_kg_over=10**7)


class TestProductWeight:
    def test_a_weight_change_is_a_change_of_the_product(
        self, sent, django_capture_on_commit_callbacks
    ):
        product = ProductFactory()
        with django_capture_on_commit_callbacks(execute=True):
            product_weight_set(product=product, weight_g=1500)
            product_weight_set(product=product, weight_g=1500)
        assert sent == [({product.pk}, set())]
        product.refresh_from_db()
        assert product.weight_g == 1500
        with pytest.raises(ValidationFailed):
            product_weight_set(product=product, weight_g=10**7)


def test_page_cache_versions_follow_stock_rates_and_weights(
    bumps, django_capture_on_commit_callbacks
):
    from storefront.caching.versions import CATALOG, SHARED, product_version_name

    offer = OfferFactory()
    warehouse = warehouse_create(merchant=offer.merchant, name="Hamburg", adopt=False)
    product = offer.product
    page = product_version_name(product.pk)
    for write in (
        lambda: warehouse_stock_set(offer=offer, warehouse=warehouse, stock=3),
        lambda: product_weight_set(product=product, weight_g=900),
    ):
        bumps.clear()
        with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
            write()
        assert any(page in names and CATALOG in names for names in bumps), bumps
    for write in (
        lambda: parcel_rate_create(warehouse=warehouse, tiers=[(2000, 0)]),
        lambda: warehouse_update(warehouse=warehouse, active=False),
    ):
        bumps.clear()
        with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
            write()
        assert any({CATALOG, SHARED} <= names for names in bumps), bumps
