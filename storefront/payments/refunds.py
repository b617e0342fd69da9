"""Refunds asked of the provider until it confirms them.

A ``Refund`` row is written with the change that owes the money (``ledger.order_money_settle``);
``refund_process`` asks the provider through django-payments' ``Payment.refund``, the same path
for the dummy provider and a real one, and records the answer: a success as a ledger event,
an error on the row with the next attempt after an exponential backoff. Every function is
idempotent: a task run twice, late or out of order, or a duplicated provider report, changes
nothing the second time.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from storefront.enqueue import task_enqueue_on_commit
from storefront.errors import Conflict
from storefront.models import MerchantOrder, Order, Payment, PaymentEvent, Refund
from storefront.payments.ledger import ledger_event_record, payment_net, units

Kind = PaymentEvent.Kind


def refund_backoff_s(*, attempts: int) -> int:
    """Seconds to wait before the next attempt after ``attempts`` failed ones."""
    exponent = max(attempts - 1, 0)
    return min(settings.REFUND_RETRY_BASE_S * 2 ** min(exponent, 30), settings.REFUND_RETRY_MAX_S)


def _locked(refund_id: int) -> tuple[Order, Refund]:
    # The order first, as every writer of its money does, then the refund.
    order_id = Refund.objects.filter(pk=refund_id).values_list("order_id", flat=True).get()
    order = Order.objects.select_for_update().get(pk=order_id)
    return order, Refund.objects.select_for_update().get(pk=refund_id)


def _provider_refund(*, refund: Refund) -> str:
    """Asks the provider for the refund; returns its reference. django-payments checks the
    amount against ``captured_amount``, a figure providers (the dummy among them) overwrite,
    so the ledger's own net for the payment is put there first."""
    payment = Payment.objects.select_for_update().get(pk=refund.payment_id)
    payment.captured_amount = units(payment_net(payment=payment))
    payment.refund(amount=units(refund.amount))
    return str(payment.transaction_id or "")


@transaction.atomic
def refund_process(*, refund_id: int, now: datetime | None = None) -> Refund:
    """Asks the provider for a pending refund once: on success the refund is recorded in the
    ledger (and the package marked refunded), on an error the row keeps it with the next
    attempt time; after ``REFUND_MAX_ATTEMPTS`` it is failed until retried from the admin.
    A refund already made or given up is returned unchanged."""
    order, refund = _locked(refund_id)
    if refund.status != Refund.Status.PENDING:
        return refund
    try:
        with transaction.atomic():  # an error undoes whatever the provider call wrote
            reference = _provider_refund(refund=refund)
    except Exception as error:
        _refund_failed(order=order, refund=refund, error=error, now=now)
        return refund
    _refund_succeeded(order=order, refund=refund, reference=reference)
    return refund


def _refund_failed(*, order: Order, refund: Refund, error: Exception, now: datetime | None) -> None:
    refund.attempts += 1
    refund.last_error = f"{type(error).__name__}: {error}"[:2000]
    if refund.attempts >= settings.REFUND_MAX_ATTEMPTS:
        refund.status = Refund.Status.FAILED
        refund.next_attempt_at = None
    else:
        delay = refund_backoff_s(attempts=refund.attempts)
        refund.next_attempt_at = (now or timezone.now()) + timedelta(seconds=delay)
    refund.save(update_fields=["attempts", "last_error", "status", "next_attempt_at", "updated_at"])
    failures = PaymentEvent.objects.filter(refund=refund, kind=Kind.REFUND_FAILED).count()
    ledger_event_record(
        order=order,
        kind=Kind.REFUND_FAILED,
        amount=refund.amount,
        idempotency_key=f"refund:{refund.pk}:failed:{failures + 1}",
        payment_id=refund.payment_id,
        merchant_order_id=refund.merchant_order_id,
        refund=refund,
        note=refund.last_error,
    )


def _refund_succeeded(*, order: Order, refund: Refund, reference: str) -> None:
    now = timezone.now()
    refund.status = Refund.Status.SUCCEEDED
    refund.succeeded_at = now
    refund.next_attempt_at = None
    refund.provider_reference = reference[:200]
    refund.save(
        update_fields=[
            "status",
            "succeeded_at",
            "next_attempt_at",
            "provider_reference",
            "updated_at",
        ]
    )
    ledger_event_record(
        order=order,
        kind=Kind.REFUND_SUCCEEDED,
        amount=refund.amount,
        idempotency_key=f"refund:{refund.pk}:succeeded",
        payment_id=refund.payment_id,
        merchant_order_id=refund.merchant_order_id,
        refund=refund,
        provider_reference=reference,
    )
    if refund.merchant_order_id is not None:
        MerchantOrder.objects.filter(pk=refund.merchant_order_id, refunded_at__isnull=True).update(
            refunded_at=now
        )


@transaction.atomic
def refund_provider_report(
    *, refund_id: int, succeeded: bool, provider_reference: str = "", error: str = ""
) -> Refund:
    """A provider's own word on a refund (a webhook of a provider that refunds later): a
    success is recorded once; a failure counts as a failed attempt unless the refund is
    already made. Duplicated or late reports change nothing."""
    order, refund = _locked(refund_id)
    if refund.status == Refund.Status.SUCCEEDED:
        return refund
    if succeeded:
        _refund_succeeded(order=order, refund=refund, reference=provider_reference)
    elif refund.status == Refund.Status.PENDING:
        _refund_failed(order=order, refund=refund, error=RuntimeError(error or "refused"), now=None)
    return refund


@transaction.atomic
def refund_retry_now(*, refund_id: int) -> Refund:
    """Puts a pending or failed refund first in line (the admin's "retry now"); the attempt
    is sent after commit. A refund already made is a ``Conflict``."""
    refund = Refund.objects.select_for_update().get(pk=refund_id)
    if refund.status == Refund.Status.SUCCEEDED:
        raise Conflict("This refund is already made.", code="refund_succeeded")
    if refund.status == Refund.Status.FAILED:
        # A new round of attempts, each with the backoff from the start.
        refund.attempts = 0
    refund.status = Refund.Status.PENDING
    refund.next_attempt_at = timezone.now()
    refund.save(update_fields=["status", "attempts", "next_attempt_at", "updated_at"])
    task_enqueue_on_commit("storefront.refund_process", args=[refund.pk])
    return refund


def refunds_due_process(*, now: datetime | None = None, limit: int = 100) -> int:
    """Asks the provider again for each pending refund whose next attempt is due (celery
    beat); returns how many were made now."""
    moment = now or timezone.now()
    due = Refund.objects.filter(status=Refund.Status.PENDING, next_attempt_at__lte=moment)
    made = 0
    for refund_id in list(
        due.order_by("next_attempt_at", "pk").values_list("pk", flat=True)[:limit]
    ):
        if refund_process(refund_id=refund_id, now=moment).status == Refund.Status.SUCCEEDED:
            made += 1
    return made
