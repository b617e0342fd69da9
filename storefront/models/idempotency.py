"""Stored answers of API requests sent with an ``Idempotency-Key`` header, so that a client
retrying a POST (a dropped connection, a timeout) gets the first answer again instead of
doing the work twice. In the database, not the cache: it must hold while Redis is down."""

from django.conf import settings
from django.db import models


class IdempotencyKey(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="idempotency_keys"
    )
    key = models.CharField(max_length=255)
    method = models.CharField(max_length=10)
    path = models.CharField(max_length=500)
    fingerprint = models.CharField(
        max_length=64, help_text="SHA-256 of the method, path and JSON body of the request."
    )
    status_code = models.PositiveSmallIntegerField()
    response_body = models.JSONField(null=True, blank=True)
    location = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "key"], name="idempotency_key_per_user")
        ]

    def __str__(self) -> str:
        return f"{self.method} {self.path} [{self.key}] -> {self.status_code}"
