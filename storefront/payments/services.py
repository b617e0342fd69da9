"""Payments of orders through django-payments: the provider's status followed onto the
order, the payment shown to the shopper, and a cancelled package's cost refunded."""

from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from storefront.enqueue import task_enqueue_on_commit
from storefront.errors import NotFound
from storefront.models import MerchantOrder, Order, OrderEvent, Payment
from storefront.orders.status import order_fail, order_lock_with_cart, order_status_set

_PAID = {"confirmed", "preauth"}
_FAILED = {"rejected", "error"}


@transaction.atomic
def order_payment_sync(*, payment_id: int) -> Order:
    """Sets the order's status from its payment's provider status: paid (and the
    confirmation mail queued), failed (every package cancelled, the stock given back, the
    lines put back into the shopper's cart) or
    still pending. Idempotent: a status seen before changes nothing."""
    payment = Payment.objects.get(pk=payment_id)
    if payment.status in _FAILED:
        order, cart = order_lock_with_cart(order_id=payment.order_id)
    else:
        order, cart = Order.objects.select_for_update().get(pk=payment.order_id), None
    if order.status != Order.Status.PENDING:
        return order
    if payment.status in _PAID:
        order_status_set(order, Order.Status.PAID, note=f"payment {payment.pk}")
        if payment.status == "confirmed" and not payment.captured_amount:
            # "confirmed" is charged in django-payments; some providers (the dummy's form)
            # do not fill in the amount, which a later partial refund needs.
            Payment.objects.filter(pk=payment.pk).update(captured_amount=payment.total)
        task_enqueue_on_commit("storefront.order_confirmation_mail_send", args=[order.pk])
    elif payment.status in _FAILED:
        order_fail(order, cart=cart, note=payment.message[:300], reason="Payment failed.")
    return order


def order_payment_for(*, order: Order) -> Payment:
    """The payment to show the shopper: the latest one (created with the order)."""
    payment = order.payments.order_by("-pk").first()
    if payment is None:
        raise NotFound("This order has no payment.", code="payment_not_found")
    return payment


@transaction.atomic
def merchant_order_refund(*, merchant_order_id: int) -> bool:
    """Gives a cancelled package's cost back through the provider (a partial refund of the
    order's confirmed payment), once: the package row stays locked while the provider is
    asked. ``False`` when there is nothing (more) to refund."""
    from payments import PaymentStatus

    package = MerchantOrder.objects.select_for_update().get(pk=merchant_order_id)
    if package.status != MerchantOrder.Status.CANCELLED or package.refunded_at is not None:
        return False
    payment = (
        Payment.objects.filter(order_id=package.order_id, status=PaymentStatus.CONFIRMED)
        .order_by("-pk")
        .first()
    )
    if payment is None or package.cost == 0:
        return False
    payment.refund(amount=Decimal(package.cost) / 100)
    OrderEvent.objects.create(
        order_id=package.order_id,
        merchant_order=package,
        from_status=package.status,
        to_status=package.status,
        note=f"Refunded {package.cost} cents.",
    )
    MerchantOrder.objects.filter(pk=package.pk).update(refunded_at=timezone.now())
    return True
