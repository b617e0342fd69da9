"""Payments of orders through django-payments: the provider's status followed onto the order
and into the payment ledger, and the payment shown to the shopper."""

from django.db import transaction

from storefront.enqueue import task_enqueue_on_commit
from storefront.errors import NotFound
from storefront.models import Order, Payment, PaymentEvent, Refund
from storefront.orders.status import order_fail, order_lock_with_cart, order_status_set
from storefront.payments.ledger import cents, ledger_event_record, order_money_settle
from storefront.payments.refunds import refund_process

_PAID = {"confirmed", "preauth"}
_FAILED = {"rejected", "error"}
Kind = PaymentEvent.Kind


@transaction.atomic
def order_payment_sync(*, payment_id: int, charged: int | None = None) -> Order:
    """Follows a payment's provider status onto its order. ``charged`` is what the provider
    took, in cents (default: the payment's ``captured_amount``, else its ``total``).

    The ledger gets the capture, authorisation or failure once per payment (a replayed or
    duplicated callback adds nothing). A pending order becomes paid (the confirmation mail
    queued) or failed (packages cancelled, stock given back, lines back in the cart). Then
    the money is settled: whatever was captured beyond what is due now (a package cancelled
    while the shopper paid, an order that expired first) is refunded through the ledger."""
    payment = Payment.objects.get(pk=payment_id)
    if payment.status in _FAILED:
        order, cart = order_lock_with_cart(order_id=payment.order_id)
    else:
        order, cart = Order.objects.select_for_update().get(pk=payment.order_id), None
    amount = charged if charged is not None else cents(payment.captured_amount or payment.total)
    _ledger_follow(order=order, payment=payment, amount=amount)
    if order.status == Order.Status.PENDING:
        if payment.status in _PAID:
            order_status_set(order, Order.Status.PAID, note=f"payment {payment.pk}")
            task_enqueue_on_commit("storefront.order_confirmation_mail_send", args=[order.pk])
        elif payment.status in _FAILED:
            order_fail(order, cart=cart, note=payment.message[:300], reason="Payment failed.")
    order_money_settle(order=order)
    return order


def _ledger_follow(*, order: Order, payment: Payment, amount: int) -> None:
    kind = {
        "confirmed": Kind.CAPTURE,
        "preauth": Kind.AUTHORIZATION,
        "rejected": Kind.PAYMENT_FAILED,
        "error": Kind.PAYMENT_FAILED,
    }.get(payment.status)
    if kind is None:
        return
    ledger_event_record(
        order=order,
        kind=kind,
        amount=amount,
        idempotency_key=f"payment:{payment.pk}:{kind}",
        payment_id=payment.pk,
        provider_reference=str(payment.transaction_id or ""),
        note=payment.message,
    )


def order_payment_for(*, order: Order) -> Payment:
    """The payment to show the shopper: the latest one (created with the order)."""
    payment = order.payments.order_by("-pk").first()
    if payment is None:
        raise NotFound("This order has no payment.", code="payment_not_found")
    return payment


def merchant_order_refund(*, merchant_order_id: int) -> bool:
    """Makes the pending refunds of a cancelled package (a message sent before refunds had
    rows of their own). ``False`` when none was made now."""
    made = False
    refunds = Refund.objects.filter(
        merchant_order_id=merchant_order_id, status=Refund.Status.PENDING
    ).values_list("pk", flat=True)
    for refund_id in list(refunds):
        made = refund_process(refund_id=refund_id).status == Refund.Status.SUCCEEDED or made
    return made
