import pytest
from django.db import transaction

from storefront.catalog.services import offer_update


@pytest.fixture(autouse=True)
def _floors(settings):
    settings.SMARTCART_PRICE_WATCH = True
    settings.SMARTCART_PRICE_WATCH_MIN_CENTS = 100
    settings.SMARTCART_PRICE_WATCH_MIN_PERCENT = 1.0
    settings.SMARTCART_PRICE_WATCH_ACTIVE_DAYS = 14


@pytest.fixture
def change_prices(django_capture_on_commit_callbacks):
    """Changes offer prices in one committed transaction (a burst), running what commits."""

    def change(*pairs):
        with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
            for offer, price in pairs:
                offer_update(offer=offer, unit_price=price)

    return change
