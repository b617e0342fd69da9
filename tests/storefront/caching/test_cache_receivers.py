"""Each write replaces the page cache's versions once, and the zone index's stamp once, however
many of the writer paths (model receivers, stale marks, ``offers_changed``) it takes."""

import pytest
from django.db import transaction

import storefront.catalog.zone_index as zone_index
from storefront.caching.versions import CATALOG, SHARED, product_version_name
from storefront.catalog.services import offer_update, offers_active_set
from storefront.models import Offer
from tests.factories import MerchantFactory, OfferFactory, ProductFactory, ShippingZoneFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def stamps(monkeypatch):
    recorded: list[bool] = []
    real = zone_index.zone_index_invalidate

    def invalidate():
        recorded.append(True)
        real()

    monkeypatch.setattr(zone_index, "zone_index_invalidate", invalidate)
    return recorded


def test_an_offer_save_bumps_once(bumps, django_capture_on_commit_callbacks):
    offer = OfferFactory()
    bumps.clear()
    with django_capture_on_commit_callbacks(execute=True):
        offer.unit_price += 1
        offer.save()
    assert bumps == [{CATALOG, product_version_name(offer.product_id)}]


def test_one_bump_per_transaction(bumps, django_capture_on_commit_callbacks):
    offers = [OfferFactory() for _ in range(3)]
    product = ProductFactory()
    bumps.clear()
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        for offer in offers:
            offer_update(offer=offer, unit_price=offer.unit_price + 1)
        offers_active_set(offers=Offer.objects.filter(pk=offers[0].pk), active=False)
        product.name = "Renamed"
        product.save()
    expected = {CATALOG, *(product_version_name(o.product_id) for o in offers)}
    assert bumps == [expected | {product_version_name(product.pk)}]


def test_nothing_is_bumped_for_a_rollback(bumps):
    offer = OfferFactory()
    bumps.clear()
    with pytest.raises(RuntimeError), transaction.atomic():
        offer_update(offer=offer, unit_price=1)
        raise RuntimeError
    assert bumps == []


def test_a_bulk_write_bumps_once(bumps, django_capture_on_commit_callbacks):
    offer = OfferFactory()
    bumps.clear()
    with django_capture_on_commit_callbacks(execute=True):
        offers_active_set(offers=Offer.objects.filter(pk=offer.pk), active=False)
    assert bumps == [{CATALOG, product_version_name(offer.product_id)}]


@pytest.mark.parametrize("field", ["free_over", "active", "name"])
def test_a_merchant_save_bumps_once(bumps, stamps, field, django_capture_on_commit_callbacks):
    merchant = MerchantFactory(free_over=None)
    OfferFactory(merchant=merchant)
    bumps.clear()
    stamps.clear()
    value = {"free_over": 2000, "active": False, "name": "Renamed"}[field]
    with django_capture_on_commit_callbacks(execute=True):
        setattr(merchant, field, value)
        merchant.save()
    assert len(bumps) == 1
    assert {CATALOG, SHARED} <= bumps[0]
    # The zone index holds a merchant's terms, not its name.
    assert stamps == ([] if field == "name" else [True])


def test_a_zone_write_bumps_and_replaces_the_stamp_once(
    bumps, stamps, django_capture_on_commit_callbacks
):
    merchant = MerchantFactory()
    bumps.clear()
    stamps.clear()
    with django_capture_on_commit_callbacks(execute=True):
        zone = ShippingZoneFactory(merchant=merchant, postal_prefix="10")
    with django_capture_on_commit_callbacks(execute=True):
        zone.base_fee = 1
        zone.save()
    with django_capture_on_commit_callbacks(execute=True):
        zone.delete()
    assert bumps == [{CATALOG, SHARED}] * 3
    assert stamps == [True] * 3


def test_a_new_merchant_replaces_the_stamp(stamps, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        MerchantFactory()
    assert stamps == [True]


def test_deleting_a_merchant_with_zones_bumps_and_replaces_the_stamp_once(
    bumps, stamps, django_capture_on_commit_callbacks
):
    merchant = MerchantFactory()
    offer = OfferFactory(merchant=merchant)
    ShippingZoneFactory(merchant=merchant, postal_prefix="10")
    ShippingZoneFactory(merchant=merchant, postal_prefix="20")
    bumps.clear()
    stamps.clear()
    with django_capture_on_commit_callbacks(execute=True):
        merchant.delete()
    assert bumps == [{CATALOG, SHARED, product_version_name(offer.product_id)}]
    assert stamps == [True]
