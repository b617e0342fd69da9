"""``offers_changed``: once per committed transaction, with what changed, from every writer."""

import pytest
from django.db import transaction

from storefront.catalog.offer_changes import offers_changed
from storefront.catalog.services import merchants_active_set, offer_update, offers_active_set
from storefront.models import Merchant, Offer
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


def test_a_feed_import_sends_once_for_all_its_batches(
    sent, settings, tmp_path, django_capture_on_commit_callbacks
):
    from django.core.files.base import ContentFile

    from storefront.imports.services import import_job_create, import_job_run
    from storefront.models import ImportJobBatch
    from storefront.validators import gtin_check_digit
    from tests.factories import ProductFactory

    settings.MEDIA_ROOT = tmp_path / "media"
    merchant = MerchantFactory(slug="acme")
    products = [ProductFactory() for _ in range(5)]
    rows = [f"{p.gtin},SKU-{n},{10 + n}.00,5,1" for n, p in enumerate(products)]
    # A row no batch can write: its batch rolls back, the others stand.
    bad_gtin = "29" + "0" * 10
    rows.append(f"{bad_gtin}{gtin_check_digit(bad_gtin)},SKU-X,1.00,1,1")
    feed = "gtin,merchant_sku,price,stock,active\n" + "\n".join(rows) + "\n"
    sent.clear()
    job = import_job_create(
        merchant=merchant,
        file=ContentFile(feed.encode(), name="feed.csv"),
        format="",
        batch_size=2,
        enqueue=False,
    )
    with django_capture_on_commit_callbacks(execute=True):
        job = import_job_run(job_id=job.pk)
    assert ImportJobBatch.objects.filter(job=job).count() == 3
    assert sent == [({p.pk for p in products}, set())]


def test_a_deferred_block_sends_what_committed_even_when_it_fails(
    sent, django_capture_on_commit_callbacks
):
    from storefront.catalog.offer_changes import offers_changed_deferred

    first, second = OfferFactory(), OfferFactory()
    sent.clear()
    with (
        django_capture_on_commit_callbacks(execute=True),
        pytest.raises(RuntimeError),
        offers_changed_deferred() as changes,
    ):
        changes.add(product_ids=[first.product_id])
        changes.add(merchant_ids=[first.merchant_id])
        assert sent == []
        raise RuntimeError  # before the second batch committed
    assert sent == [({first.product_id}, {first.merchant_id})]
    assert second.product_id not in sent[0][0]
