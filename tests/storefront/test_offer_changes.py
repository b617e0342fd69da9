"""``offers_changed``: once per committed transaction, with what changed, from every writer."""

import pytest
from django.db import transaction

from storefront.models import Merchant, Offer
from storefront.offer_changes import offers_changed
from storefront.services import merchants_active_set, offer_update, offers_active_set
from tests.factories import MerchantFactory, OfferFactory, ShippingZoneFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent():
    received = []

    def receiver(sender, product_ids, merchant_ids, **kwargs):
        received.append((set(product_ids), set(merchant_ids)))

    offers_changed.connect(receiver, dispatch_uid="test_offer_changes")
    yield received
    offers_changed.disconnect(dispatch_uid="test_offer_changes")


def test_one_signal_per_transaction_with_every_product(sent, django_capture_on_commit_callbacks):
    offers = [OfferFactory() for _ in range(3)]
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        for offer in offers:
            offer_update(offer=offer, unit_price=offer.unit_price + 1)
    assert sent == [({offer.product_id for offer in offers}, set())]


def test_nothing_is_sent_before_the_commit_or_after_a_rollback(sent):
    offer = OfferFactory()
    sent.clear()
    with pytest.raises(RuntimeError), transaction.atomic():
        offer_update(offer=offer, unit_price=1)
        assert sent == []
        raise RuntimeError
    assert sent == []


def test_merchant_terms_and_zones_are_merchant_changes(sent, django_capture_on_commit_callbacks):
    merchant = MerchantFactory()
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):
        merchant.name = "Renamed"  # not a term: nothing to tell
        merchant.save()
    assert sent == []
    with django_capture_on_commit_callbacks(execute=True):
        merchant.free_over = 2000
        merchant.save()
    with django_capture_on_commit_callbacks(execute=True):
        zone = ShippingZoneFactory(merchant=merchant, postal_prefix="10")
    with django_capture_on_commit_callbacks(execute=True):
        zone.delete()
    assert sent == [(set(), {merchant.pk})] * 3


def test_bulk_activation_is_a_change(sent, django_capture_on_commit_callbacks):
    """The admin's activate/deactivate actions (QuerySet.update: no model signals)."""
    offers = [OfferFactory() for _ in range(2)]
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):
        offers_active_set(offers=Offer.objects.filter(pk__in=[o.pk for o in offers]), active=False)
    with django_capture_on_commit_callbacks(execute=True):
        merchants_active_set(
            merchants=Merchant.objects.filter(pk=offers[0].merchant_id), active=False
        )
    assert sent == [({o.product_id for o in offers}, set()), (set(), {offers[0].merchant_id})]
