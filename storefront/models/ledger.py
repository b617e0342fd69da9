"""The payment ledger: every authorisation, capture, refund and failure of an order's money
as one immutable row, and the refunds the shop owes a shopper until the provider confirms.

The amounts the shop believes (authorized, captured, refunded) are sums of these events,
never a figure a provider callback overwrites; ``Order.amount_*`` keeps the sums, written in
the transaction that adds each event. ``idempotency_key`` is unique, so a replayed or
duplicated provider callback cannot add an event twice. Amounts are integer cents.
"""

from django.db import models
from django.db.models import Q

from storefront.models.fields import MoneyField
from storefront.models.orders import MerchantOrder, Order, Payment


class Refund(models.Model):
    """Money the shop owes back: asked of the provider until it confirms. ``pending`` is
    retried with backoff (``next_attempt_at``); ``failed`` gave up after
    ``REFUND_MAX_ATTEMPTS`` and waits for someone to retry it from the admin."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        SUCCEEDED = "succeeded", "Refunded"
        FAILED = "failed", "Failed"

    class Reason(models.TextChoices):
        PACKAGE_CANCELLED = "package_cancelled", "Package cancelled"
        OVERCHARGE = "overcharge", "Charged more than due"

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="refunds")
    merchant_order = models.ForeignKey(
        MerchantOrder, on_delete=models.CASCADE, null=True, blank=True, related_name="refunds"
    )
    payment = models.ForeignKey(Payment, on_delete=models.CASCADE, related_name="refunds")
    amount = MoneyField()
    currency = models.CharField(max_length=3)
    reason = models.CharField(max_length=20, choices=Reason.choices)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    # One refund per cause ("package:<id>", "order:<id>:<n>"): a repeated cancel adds none.
    idempotency_key = models.CharField(max_length=100, unique=True, editable=False)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    provider_reference = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    succeeded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="refund_due_idx"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="refund_amount_positive"),
            models.CheckConstraint(
                condition=~Q(status="succeeded") | Q(succeeded_at__isnull=False),
                name="refund_succeeded_has_time",
            ),
        ]

    def __str__(self) -> str:
        return f"Refund {self.pk} of {self.order_id}: {self.amount} ({self.status})"


class PaymentEvent(models.Model):
    """One movement of an order's money as the provider reported it. Never updated (a
    PostgreSQL trigger refuses it); a correction is a new event. It goes only with its order
    (a demo reset), which nothing in the admin deletes."""

    class Kind(models.TextChoices):
        AUTHORIZATION = "authorization", "Authorised"
        CAPTURE = "capture", "Captured"
        PAYMENT_FAILED = "payment_failed", "Payment failed"
        REFUND_REQUESTED = "refund_requested", "Refund requested"
        REFUND_SUCCEEDED = "refund_succeeded", "Refunded"
        REFUND_FAILED = "refund_failed", "Refund failed"

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="payment_events")
    payment = models.ForeignKey(
        Payment, on_delete=models.CASCADE, null=True, blank=True, related_name="events"
    )
    merchant_order = models.ForeignKey(
        MerchantOrder, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    refund = models.ForeignKey(
        Refund, on_delete=models.CASCADE, null=True, blank=True, related_name="events"
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    amount = MoneyField()
    currency = models.CharField(max_length=3)
    provider_reference = models.CharField(max_length=200, blank=True)
    idempotency_key = models.CharField(max_length=150, unique=True)
    note = models.CharField(max_length=300, blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["at", "id"]
        indexes = [models.Index(fields=["order", "kind"], name="paymentevent_order_kind_idx")]
        constraints = [
            models.CheckConstraint(
                condition=~Q(kind__in=["refund_requested", "refund_succeeded", "refund_failed"])
                | Q(refund__isnull=False),
                name="paymentevent_refund_kinds_name_the_refund",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.amount} {self.currency}"
