"""Follows django-payments: every provider status change updates the order (connected in
``StorefrontConfig.ready``)."""

from django.dispatch import receiver
from payments.signals import status_changed


@receiver(status_changed, dispatch_uid="storefront.orders.payment_status_changed")
def payment_status_changed(sender, instance, **kwargs) -> None:
    from storefront.payments.services import order_payment_sync

    order_payment_sync(payment_id=instance.pk)
