import pytest

from storefront.catalog.offer_changes import offers_changed


@pytest.fixture
def sent():
    """``(product_ids, merchant_ids)`` of each ``offers_changed`` (the price watch's trigger)."""
    received = []

    def receiver(sender, product_ids, merchant_ids, **kwargs):
        received.append((set(product_ids), set(merchant_ids)))

    offers_changed.connect(receiver, dispatch_uid="test_fulfillment_sent")
    yield received
    offers_changed.disconnect(dispatch_uid="test_fulfillment_sent")
