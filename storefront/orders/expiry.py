"""Orders never paid: failed once ``ORDER_PAYMENT_TIMEOUT_S`` has passed (celery beat)."""

from django.db import transaction
from django.utils import timezone

from storefront.models import Order, Payment
from storefront.orders.status import order_fail, order_lock_with_cart


def orders_unpaid_expire(*, now=None) -> int:
    """Fails the orders still awaiting payment ``ORDER_PAYMENT_TIMEOUT_S`` after they were
    placed: their packages are cancelled, their stock given back and their lines put back
    into the cart, so an abandoned payment page does not hold units forever. Their open
    payments are marked cancelled. Returns how many orders it failed; idempotent (celery
    beat runs it every minute)."""
    from datetime import timedelta

    from django.conf import settings
    from payments import PaymentStatus

    cutoff = (now or timezone.now()) - timedelta(seconds=settings.ORDER_PAYMENT_TIMEOUT_S)
    ids = Order.objects.filter(status=Order.Status.PENDING, placed_at__lt=cutoff).values_list(
        "pk", flat=True
    )
    expired = 0
    for order_id in list(ids.order_by("pk")[:500]):
        with transaction.atomic():
            order, cart = order_lock_with_cart(order_id=order_id)
            if order.status != Order.Status.PENDING:
                continue
            order_fail(order, cart=cart, note="Not paid in time.", reason="Not paid in time.")
            # update(): no status signal, the order is settled already.
            Payment.objects.filter(
                order=order, status__in=[PaymentStatus.WAITING, PaymentStatus.INPUT]
            ).update(status=PaymentStatus.CANCELLED)
            expired += 1
    return expired
