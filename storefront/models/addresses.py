"""A signed-in shopper's shipping addresses, kept from their checkouts to fill the next one."""

from django.conf import settings
from django.db import models


class Address(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="addresses"
    )
    email = models.EmailField(max_length=254)
    full_name = models.CharField(max_length=120)
    address_line = models.CharField(max_length=200)
    city = models.CharField(max_length=100)
    postal_code = models.CharField(max_length=10)
    country = models.CharField(max_length=2, help_text="ISO 3166-1 alpha-2 code.")
    last_used_at = models.DateTimeField()

    class Meta:
        ordering = ["-last_used_at", "-id"]
        verbose_name_plural = "addresses"
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "full_name", "address_line", "city", "postal_code", "country"],
                name="address_one_per_owner_and_place",
            )
        ]
        indexes = [models.Index(fields=["owner", "-last_used_at"], name="address_owner_recent")]

    def __str__(self) -> str:
        return f"{self.full_name}, {self.address_line}, {self.postal_code} {self.city}"
