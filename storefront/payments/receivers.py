"""Follows django-payments: every provider status change updates the order and its ledger
(connected in ``StorefrontConfig.ready``)."""

from django.dispatch import receiver
from payments.signals import status_changed

from storefront.payments.metrics import metrics_register


@receiver(status_changed, dispatch_uid="storefront.orders.payment_status_changed")
def payment_status_changed(sender, instance, **kwargs) -> None:
    from storefront.payments.ledger import cents
    from storefront.payments.services import order_payment_sync

    # What the provider took is on the instance it changed, which the row may not show yet
    # (the dummy's form saves after signalling, and may then overwrite captured_amount).
    charged = cents(instance.captured_amount or instance.total)
    order_payment_sync(payment_id=instance.pk, charged=charged)


# Registered with the receivers, which StorefrontConfig.ready imports once per process.
metrics_register()
