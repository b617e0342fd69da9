"""The payment ledger's writes: an event per movement of an order's money, the order's sums
kept with it, and the settling of what is due against what was captured.

Every function here runs inside the caller's transaction with the order row locked
(``select_for_update``), so two writers of one order's money are serialised and the sums on
the order always equal the sums of its events.
"""

from decimal import Decimal

from django.db.models import F, Q, Sum
from django.utils import timezone

from storefront.enqueue import task_enqueue_on_commit
from storefront.models import MerchantOrder, Order, Payment, PaymentEvent, Refund

Kind = PaymentEvent.Kind

# Which of the order's sums an event kind adds to.
_SUMS = {
    Kind.AUTHORIZATION: "amount_authorized",
    Kind.CAPTURE: "amount_captured",
    Kind.REFUND_SUCCEEDED: "amount_refunded",
}
_OPEN_PAYMENT = ("waiting", "input")


def cents(amount: Decimal | int | float | None) -> int:
    """A provider's amount in currency units (``Decimal("12.34")``) as integer cents."""
    return int((Decimal(str(amount or 0)) * 100).to_integral_value())


def units(amount_cents: int) -> Decimal:
    return Decimal(amount_cents) / 100


def ledger_event_record(
    *,
    order: Order,
    kind: str,
    amount: int,
    idempotency_key: str,
    payment_id: int | None = None,
    merchant_order_id: int | None = None,
    refund: Refund | None = None,
    provider_reference: str = "",
    note: str = "",
) -> PaymentEvent | None:
    """Adds one event to the locked ``order``'s ledger and its amount to the order's sums;
    ``None`` (and nothing written) when an event with ``idempotency_key`` exists, so a
    replayed callback or a task run twice counts once."""
    if PaymentEvent.objects.filter(idempotency_key=idempotency_key).exists():
        return None
    event = PaymentEvent.objects.create(
        order=order,
        payment_id=payment_id,
        merchant_order_id=merchant_order_id,
        refund=refund,
        kind=kind,
        amount=amount,
        currency=order.currency,
        provider_reference=provider_reference[:200],
        idempotency_key=idempotency_key,
        note=note[:300],
    )
    field = _SUMS.get(Kind(kind))
    if field is not None and amount:
        Order.objects.filter(pk=order.pk).update(**{field: F(field) + amount})
        order.refresh_from_db(fields=[field])
    return event


def order_amount_due(*, order: Order) -> int:
    """What the shopper owes for the order now: the cost of its packages not cancelled."""
    due = (
        MerchantOrder.objects.filter(order=order)
        .exclude(status=MerchantOrder.Status.CANCELLED)
        .aggregate(due=Sum("cost"))["due"]
    )
    return int(due or 0)


def order_refunds_total(*, order: Order) -> int:
    """Every refund the shop has decided on, made or not yet made."""
    return int(Refund.objects.filter(order=order).aggregate(total=Sum("amount"))["total"] or 0)


def payment_net(*, payment: Payment) -> int:
    """What the ledger says this payment holds now: captured less refunded."""
    sums = PaymentEvent.objects.filter(payment=payment).aggregate(
        captured=Sum("amount", filter=Q(kind=Kind.CAPTURE)),
        refunded=Sum("amount", filter=Q(kind=Kind.REFUND_SUCCEEDED)),
    )
    return int(sums["captured"] or 0) - int(sums["refunded"] or 0)


def order_money_settle(*, order: Order, package: MerchantOrder | None = None) -> Refund | None:
    """Brings the locked ``order``'s money in line with what is due after a change (a
    capture, a cancelled package, a failed or expired order).

    Not captured yet: the open payment asks for what is due now, so a package cancelled
    before payment is never charged. Captured: whatever was captured beyond what is due and
    not already being refunded becomes a pending ``Refund`` (for ``package`` when a package's
    cancellation caused it) whose provider call is sent after commit. Returns that refund.
    """
    due = order_amount_due(order=order)
    if order.amount_captured == 0:
        _open_payments_set(order=order, due=due)
        return None
    owed = order.amount_captured - order_refunds_total(order=order) - due
    if owed <= 0:
        return None
    payment = Payment.objects.filter(order=order, events__kind=Kind.CAPTURE).order_by("-pk").first()
    if payment is None:
        return None
    if package is not None:
        key, reason = f"package:{package.pk}", Refund.Reason.PACKAGE_CANCELLED
    else:
        count = Refund.objects.filter(order=order).count()
        key, reason = f"order:{order.pk}:{count + 1}", Refund.Reason.OVERCHARGE
    if Refund.objects.filter(idempotency_key=key).exists():
        return None
    refund = Refund.objects.create(
        order=order,
        merchant_order=package,
        payment=payment,
        amount=owed,
        currency=order.currency,
        reason=reason,
        idempotency_key=key,
        next_attempt_at=timezone.now(),
    )
    ledger_event_record(
        order=order,
        kind=Kind.REFUND_REQUESTED,
        amount=owed,
        idempotency_key=f"refund:{refund.pk}:requested",
        payment_id=payment.pk,
        merchant_order_id=package.pk if package is not None else None,
        refund=refund,
        note=refund.get_reason_display(),
    )
    task_enqueue_on_commit("storefront.refund_process", args=[refund.pk])
    return refund


def _open_payments_set(*, order: Order, due: int) -> None:
    """The payment not made yet asks for ``due``; with nothing due it is cancelled (its
    status written directly: the order is settled already and needs no signal)."""
    payments = Payment.objects.filter(order=order, status__in=_OPEN_PAYMENT)
    if due == 0:
        payments.update(status="cancelled")
        return
    shipping = (
        MerchantOrder.objects.filter(order=order)
        .exclude(status=MerchantOrder.Status.CANCELLED)
        .aggregate(shipping=Sum("shipping"))["shipping"]
    )
    payments.update(total=units(due), delivery=units(int(shipping or 0)))
