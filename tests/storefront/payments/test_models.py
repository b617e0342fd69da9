"""What the database holds by itself: events never change, nothing refunded beyond what was
captured, and each package keeps the commission in force when it was placed."""

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import F

from storefront.models import MerchantOrder, Order, PaymentEvent
from storefront.payments.services import order_payment_for
from tests.storefront.orders.conftest import place
from tests.storefront.payments.conftest import pay_with_dummy_form

pytestmark = pytest.mark.django_db


@pytest.fixture
def paid(two_merchant_cart):
    order = place(two_merchant_cart)
    pay_with_dummy_form(order_payment_for(order=order))
    order.refresh_from_db()
    return order


def test_nothing_is_refunded_beyond_what_was_captured(paid):
    with pytest.raises(IntegrityError), transaction.atomic():
        Order.objects.filter(pk=paid.pk).update(amount_refunded=F("amount_captured") + 1)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a PostgreSQL trigger")
def test_a_ledger_event_cannot_be_changed(paid):
    with pytest.raises(IntegrityError, match="immutable"), transaction.atomic():
        PaymentEvent.objects.filter(order=paid).update(amount=1)


def test_packages_keep_the_commission_in_force_when_placed(two_merchant_cart, settings):
    settings.MARKETPLACE_COMMISSION_BPS = 1200
    first_merchant = two_merchant_cart.lines.order_by("pk").first().offer.merchant
    first_merchant.commission_bps = 800
    first_merchant.save()
    order = place(two_merchant_cart)
    rates = dict(order.merchant_orders.values_list("merchant_id", "commission_bps"))
    assert rates[first_merchant.pk] == 800
    assert sorted(rates.values()) == [800, 1200]
    first_merchant.commission_bps = 300
    first_merchant.save()
    assert MerchantOrder.objects.get(order=order, merchant=first_merchant).commission_bps == 800
