"""Refunds: made once however often or in whatever order the task and the provider's reports
arrive; provider errors kept on the row and retried with backoff."""

from datetime import timedelta

import pytest
from django.utils import timezone
from payments.dummy import DummyProvider

from storefront.errors import Conflict
from storefront.models import Order, PaymentEvent, Refund
from storefront.payments.refunds import (
    refund_backoff_s,
    refund_process,
    refund_provider_report,
    refund_retry_now,
    refunds_due_process,
)
from storefront.payments.services import order_payment_for
from tests.storefront.orders.conftest import place
from tests.storefront.payments.conftest import merchant_cancel, pay_with_dummy_form

pytestmark = pytest.mark.django_db


@pytest.fixture
def paid_order(two_merchant_cart, django_capture_on_commit_callbacks):
    order = place(two_merchant_cart)
    with django_capture_on_commit_callbacks(execute=True):
        pay_with_dummy_form(order_payment_for(order=order))
    return order


def _cancel_all_queued(order) -> list[Refund]:
    """Cancels every package without running the refund tasks sent after commit."""
    for package in order.merchant_orders.order_by("pk"):
        merchant_cancel(package)
    return list(Refund.objects.filter(order=order).order_by("pk"))


def _succeeded_events(order) -> int:
    return PaymentEvent.objects.filter(order=order, kind=PaymentEvent.Kind.REFUND_SUCCEEDED).count()


def test_the_refund_task_run_twice_refunds_once(paid_order):
    first, _ = _cancel_all_queued(paid_order)
    for _ in range(2):
        refund_process(refund_id=first.pk)
    paid_order.refresh_from_db()
    assert paid_order.amount_refunded == first.amount
    assert _succeeded_events(paid_order) == 1


def test_refunds_made_out_of_order_add_up(paid_order):
    first, second = _cancel_all_queued(paid_order)
    refund_process(refund_id=second.pk)
    refund_process(refund_id=first.pk)
    refund_process(refund_id=second.pk)
    paid_order.refresh_from_db()
    assert paid_order.status == Order.Status.CANCELLED
    assert paid_order.amount_refunded == paid_order.amount_captured == paid_order.total
    assert _succeeded_events(paid_order) == 2


def test_a_provider_report_before_and_after_the_task_counts_once(paid_order):
    first, _ = _cancel_all_queued(paid_order)
    refund_provider_report(refund_id=first.pk, succeeded=True, provider_reference="re_1")
    refund_provider_report(refund_id=first.pk, succeeded=True, provider_reference="re_1")
    refund_process(refund_id=first.pk)
    refund_provider_report(refund_id=first.pk, succeeded=False, error="late failure")
    first.refresh_from_db()
    assert (first.status, first.provider_reference, first.attempts) == ("succeeded", "re_1", 0)
    paid_order.refresh_from_db()
    assert paid_order.amount_refunded == first.amount


def test_a_cancel_replayed_adds_no_second_refund(paid_order, django_capture_on_commit_callbacks):
    package = paid_order.merchant_orders.order_by("pk").first()
    with django_capture_on_commit_callbacks(execute=True):
        merchant_cancel(package)
    with pytest.raises(Conflict):
        merchant_cancel(package)
    assert Refund.objects.filter(order=paid_order).count() == 1


def test_provider_errors_are_kept_and_retried_with_backoff(paid_order, monkeypatch, settings):
    settings.REFUND_RETRY_BASE_S, settings.REFUND_MAX_ATTEMPTS = 10, 3

    def refuse(self, payment, amount=None):
        raise OSError("gateway timeout")

    monkeypatch.setattr(DummyProvider, "refund", refuse)
    first, _ = _cancel_all_queued(paid_order)
    now = timezone.now()
    refund_process(refund_id=first.pk, now=now)
    first.refresh_from_db()
    assert first.status == Refund.Status.PENDING
    assert (first.attempts, first.last_error) == (1, "OSError: gateway timeout")
    assert first.next_attempt_at == now + timedelta(seconds=10)
    assert refunds_due_process(now=now + timedelta(seconds=5)) == 0
    refunds_due_process(now=now + timedelta(seconds=10))
    first.refresh_from_db()
    assert first.attempts == 2
    assert first.next_attempt_at == now + timedelta(seconds=30)
    refunds_due_process(now=now + timedelta(seconds=30))
    first.refresh_from_db()
    assert (first.status, first.attempts, first.next_attempt_at) == ("failed", 3, None)
    paid_order.refresh_from_db()
    assert paid_order.amount_refunded == 0

    monkeypatch.undo()
    refund_retry_now(refund_id=first.pk)
    assert refunds_due_process() >= 1
    first.refresh_from_db()
    assert first.status == Refund.Status.SUCCEEDED
    with pytest.raises(Conflict):
        refund_retry_now(refund_id=first.pk)
    failures = PaymentEvent.objects.filter(refund=first, kind=PaymentEvent.Kind.REFUND_FAILED)
    assert failures.count() == 3


def test_backoff_doubles_up_to_the_cap(settings):
    settings.REFUND_RETRY_BASE_S, settings.REFUND_RETRY_MAX_S = 30, 100
    assert [refund_backoff_s(attempts=n) for n in (1, 2, 3, 4)] == [30, 60, 100, 100]


def test_ledger_events_cannot_be_recorded_twice_with_one_key(paid_order):
    from storefront.payments.ledger import ledger_event_record

    order = Order.objects.get(pk=paid_order.pk)
    key = "payment:test:capture"
    assert ledger_event_record(order=order, kind="capture", amount=5, idempotency_key=key)
    assert ledger_event_record(order=order, kind="capture", amount=5, idempotency_key=key) is None
    order.refresh_from_db()
    assert order.amount_captured == paid_order.total + 5
