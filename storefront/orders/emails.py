"""The order confirmation mail (sent by a worker: ``storefront.orders.tasks``)."""

from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.utils import timezone

from storefront.models import MerchantOrder, Order
from storefront.orders.selectors import _with_packages


def order_confirmation_mail_send(*, order_id: int) -> bool:
    """Mails the confirmation of a paid order once; ``False`` when there was nothing to send
    (not paid, or sent already). The order row is locked while sending, so two deliveries of
    the task cannot both send it."""
    with transaction.atomic():
        order = (
            _with_packages(Order.objects.select_for_update(of=("self",)))
            .filter(pk=order_id, status=Order.Status.PAID, confirmation_sent_at__isnull=True)
            .first()
        )
        if order is None:
            return False
        context = {"order": order}
        send_mail(
            subject=render_to_string("web/orders/confirmation_subject.txt", context).strip(),
            message=render_to_string("web/orders/confirmation_email.txt", context),
            from_email=None,
            recipient_list=[order.email],
        )
        Order.objects.filter(pk=order.pk).update(confirmation_sent_at=timezone.now())
    return True


def package_shipped_mail_send(*, merchant_order_id: int) -> bool:
    """Mails the shopper that one package shipped, with its tracking reference, once;
    ``False`` when there was nothing to send (not shipped, or sent already). The package row
    is locked while sending, so two deliveries of the task cannot both send it."""
    with transaction.atomic():
        package = (
            MerchantOrder.objects.select_for_update(of=("self",))
            .select_related("order")
            .filter(
                pk=merchant_order_id,
                status__in=(MerchantOrder.Status.SHIPPED, MerchantOrder.Status.DELIVERED),
                shipped_mail_sent_at__isnull=True,
            )
            .first()
        )
        if package is None:
            return False
        context = {
            "order": package.order,
            "package": package,
            "lines": list(package.lines.order_by("pk")),
        }
        send_mail(
            subject=render_to_string("web/orders/shipped_subject.txt", context).strip(),
            message=render_to_string("web/orders/shipped_email.txt", context),
            from_email=None,
            recipient_list=[package.order.email],
        )
        MerchantOrder.objects.filter(pk=package.pk).update(shipped_mail_sent_at=timezone.now())
    return True
