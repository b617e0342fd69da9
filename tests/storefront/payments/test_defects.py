"""The two money defects: refunds with the dummy provider, and the charge after a package
was cancelled before payment."""

from decimal import Decimal

import pytest

from storefront.models import MerchantOrder, Order, Payment, Refund
from storefront.payments.services import order_payment_for
from tests.storefront.orders.conftest import place
from tests.storefront.payments.conftest import merchant_cancel, pay_with_dummy_form

pytestmark = pytest.mark.django_db


def test_a_package_cancelled_after_paying_with_the_dummy_form_is_refunded(
    two_merchant_cart, django_capture_on_commit_callbacks
):
    # The dummy's form saves the payment after signalling, writing captured_amount back to 0.
    order = place(two_merchant_cart)
    with django_capture_on_commit_callbacks(execute=True):
        pay_with_dummy_form(order_payment_for(order=order))
    package = order.merchant_orders.order_by("pk").first()
    with django_capture_on_commit_callbacks(execute=True):
        merchant_cancel(package)
    refund = Refund.objects.get(merchant_order=package)
    assert refund.status == Refund.Status.SUCCEEDED, refund.last_error
    assert refund.amount == package.cost
    order.refresh_from_db()
    assert (order.amount_captured, order.amount_refunded) == (order.total, package.cost)
    package.refresh_from_db()
    assert package.refunded_at is not None


def test_a_package_cancelled_before_payment_is_not_charged(
    two_merchant_cart, django_capture_on_commit_callbacks
):
    order = place(two_merchant_cart)
    cancelled, kept = order.merchant_orders.order_by("pk")
    merchant_cancel(cancelled)
    payment = order_payment_for(order=order)
    assert payment.total == Decimal(kept.cost) / 100
    with django_capture_on_commit_callbacks(execute=True):
        pay_with_dummy_form(payment)
    order.refresh_from_db()
    assert order.status == Order.Status.PAID
    assert order.amount_captured == kept.cost
    assert not Refund.objects.filter(order=order).exists()


def test_a_capture_above_what_is_due_is_refunded(
    two_merchant_cart, django_capture_on_commit_callbacks
):
    # The shopper's form was loaded (old total) before the merchant cancelled.
    order = place(two_merchant_cart)
    stale = order_payment_for(order=order)
    cancelled, kept = order.merchant_orders.order_by("pk")
    merchant_cancel(cancelled)
    with django_capture_on_commit_callbacks(execute=True):
        pay_with_dummy_form(stale)
    order.refresh_from_db()
    assert order.amount_captured == order.total
    refund = Refund.objects.get(order=order)
    assert (refund.reason, refund.amount) == (Refund.Reason.OVERCHARGE, cancelled.cost)
    assert refund.status == Refund.Status.SUCCEEDED
    assert order.amount_net == kept.cost


def test_a_payment_confirmed_after_the_order_expired_is_refunded_in_full(
    two_merchant_cart, django_capture_on_commit_callbacks, settings
):
    from datetime import timedelta

    from django.utils import timezone

    from storefront.orders.expiry import orders_unpaid_expire

    order = place(two_merchant_cart)
    stale = Payment.objects.get(order=order)
    assert orders_unpaid_expire(now=timezone.now() + timedelta(days=1)) == 1
    stale.status = "input"  # the provider's page was open when the order expired
    with django_capture_on_commit_callbacks(execute=True):
        pay_with_dummy_form(stale)
    order.refresh_from_db()
    assert order.status == Order.Status.FAILED
    assert order.amount_captured == order.total
    assert order.amount_refunded == order.total
    assert not order.merchant_orders.exclude(status=MerchantOrder.Status.CANCELLED).exists()
