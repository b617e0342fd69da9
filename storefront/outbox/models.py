"""One row per task handed to Celery: written in the transaction that causes it, so the work
is never lost between a commit and a broker that is down."""

from django.db import models
from django.db.models import Q
from django.utils import timezone


class OutboxMessage(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        DELIVERED = "delivered", "Delivered"
        # Given up after OUTBOX_MAX_ATTEMPTS handler errors; an admin retry reopens it.
        FAILED = "failed", "Failed"

    task_name = models.CharField(max_length=200)
    args = models.JSONField(default=list, blank=True)
    kwargs = models.JSONField(default=dict, blank=True)
    queue = models.CharField(max_length=100, blank=True, default="")
    # A countdown kept as a time, so a message delivered late does not wait it out again.
    run_after = models.DateTimeField(null=True, blank=True)
    # Messages with one key are one piece of work ("drain what is recorded"): while one is
    # pending, another adds nothing.
    coalesce_key = models.CharField(max_length=64, blank=True, default="")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True, default="")
    next_attempt_at = models.DateTimeField(default=timezone.now)
    created_at = models.DateTimeField(default=timezone.now)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "outbox"
        ordering = ["-pk"]
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="outbox_due"),
            models.Index(fields=["status", "delivered_at"], name="outbox_delivered"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["coalesce_key"],
                condition=Q(status="pending") & ~Q(coalesce_key=""),
                name="outbox_one_pending_per_key",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.task_name} #{self.pk} ({self.status})"
