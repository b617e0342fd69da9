"""Fulfillment nodes (pricing contract version 2): warehouses, stock per warehouse, parcel rates.

A merchant with no active warehouse is priced as in version 1 (``Offer.stock`` and the
merchant's or zone's shipping). A merchant with active warehouses is a version 2 merchant: each
active warehouse is a node, an offer sells from a warehouse only where it has a
``WarehouseStock`` row, and a node's parcel rate for a destination is its ``ParcelRate`` with
the longest matching postal prefix (none matching: the node does not ship there). The
free-shipping threshold and the discount stay on ``Merchant`` and count all its warehouses.
"""

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator
from django.db import models
from django.db.models import Q

from storefront.models.catalog import Offer
from storefront.models.fields import MoneyField
from storefront.models.merchants import Merchant
from storefront.validators import postal_prefix_normalize, validate_postal_prefix

# A fee per started kilogram is small next to MAX_MONEY_CENTS: with MAX_WEIGHT_G (models.catalog)
# and the cart limits, this keeps the worst weight fee of a cart inside the engine's money limit.
MAX_PER_KG_OVER_CENTS = 1_000_000


class Warehouse(models.Model):
    """A fulfillment node of a merchant: where a parcel ships from."""

    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="warehouses")
    name = models.CharField(max_length=80, help_text="Shown to shoppers: 'ships from <name>'.")
    postal_code = models.CharField(max_length=10, blank=True)
    city = models.CharField(max_length=80, blank=True)
    active = models.BooleanField(
        default=True,
        help_text="Inactive warehouses ship nothing; a merchant with no active warehouse ships "
        "by its own shipping rule and offer stock.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["merchant_id", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["merchant", "name"],
                name="warehouse_unique_name_per_merchant",
                violation_error_message="This merchant already has a warehouse with this name.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.merchant.name}: {self.name}"


class WarehouseStock(models.Model):
    """An offer's stock at one of its merchant's warehouses; ``stock`` null means unlimited.

    Without a row the offer is not sold from that warehouse.
    """

    offer = models.ForeignKey(Offer, on_delete=models.CASCADE, related_name="warehouse_stock")
    warehouse = models.ForeignKey(Warehouse, on_delete=models.CASCADE, related_name="stock_rows")
    stock = models.PositiveIntegerField(
        null=True, blank=True, help_text="Units at this warehouse. Empty: unlimited."
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["warehouse_id", "offer_id"]
        verbose_name = "warehouse stock"
        verbose_name_plural = "warehouse stock"
        constraints = [
            models.UniqueConstraint(
                fields=["offer", "warehouse"],
                name="warehousestock_unique_offer_warehouse",
                violation_error_message="This offer already has stock at this warehouse.",
            ),
            models.CheckConstraint(
                condition=Q(stock__isnull=True) | Q(stock__gte=0),
                name="warehousestock_stock_non_negative",
                violation_error_message="Stock cannot be negative.",
            ),
        ]

    def __str__(self) -> str:
        return f"offer {self.offer_id} at warehouse {self.warehouse_id}"

    def clean(self) -> None:
        super().clean()
        if (
            self.offer_id is not None
            and self.warehouse_id is not None
            and self.offer.merchant_id != self.warehouse.merchant_id
        ):
            raise ValidationError(
                {"warehouse": "The warehouse belongs to another merchant than the offer."},
                code="warehouse_other_merchant",
            )


class ParcelRate(models.Model):
    """What a parcel from a warehouse costs to postal codes starting with a prefix.

    The prefix is stored normalised like ``ShippingZone``'s (upper-case, no separators);
    empty means everywhere; the longest matching prefix wins. Parcel fee = base fee + per
    extra unit * (units - 1) + the weight fee of the tiers (``WeightTier``), then per started
    kilogram over the last tier.
    """

    warehouse = models.ForeignKey(Warehouse, on_delete=models.CASCADE, related_name="parcel_rates")
    postal_prefix = models.CharField(
        max_length=10,
        blank=True,
        validators=[validate_postal_prefix],
        help_text="Postal codes starting with this (letters and digits). Empty: everywhere.",
    )
    base_fee = MoneyField(default=0, help_text="Parcel fee for the first unit.")
    per_extra_unit = MoneyField(default=0, help_text="Parcel fee for each further unit.")
    per_kg_over = MoneyField(
        default=0,
        validators=[MaxValueValidator(MAX_PER_KG_OVER_CENTS)],
        help_text="Fee per started kilogram over the last weight tier (in cents).",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["warehouse_id", "postal_prefix"]
        constraints = [
            models.UniqueConstraint(
                fields=["warehouse", "postal_prefix"],
                name="parcelrate_unique_prefix_per_warehouse",
                violation_error_message="This warehouse already has a rate for this prefix.",
            ),
            models.CheckConstraint(
                condition=Q(base_fee__gte=0) & Q(per_extra_unit__gte=0),
                name="parcelrate_fees_non_negative",
                violation_error_message="Fees cannot be negative.",
            ),
            models.CheckConstraint(
                condition=Q(per_kg_over__gte=0, per_kg_over__lte=MAX_PER_KG_OVER_CENTS),
                name="parcelrate_per_kg_over_range",
                violation_error_message="The fee per kilogram over cannot be negative or "
                "absurdly large.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.warehouse}: {self.postal_prefix or 'everywhere'}"

    def clean_fields(self, exclude=None) -> None:
        # Normalise before the field validators run, so "sw1 a" is stored and checked as "SW1A".
        self.postal_prefix = postal_prefix_normalize(self.postal_prefix or "")
        super().clean_fields(exclude=exclude)


class WeightTier(models.Model):
    """The weight fee of a parcel of at most ``up_to_g`` grams (the first tier that fits wins)."""

    rate = models.ForeignKey(ParcelRate, on_delete=models.CASCADE, related_name="tiers")
    up_to_g = models.PositiveIntegerField("up to (g)")
    fee = MoneyField(help_text="Weight fee of a parcel up to this weight (in cents).")

    class Meta:
        ordering = ["rate_id", "up_to_g"]
        constraints = [
            models.UniqueConstraint(
                fields=["rate", "up_to_g"],
                name="weighttier_unique_up_to_per_rate",
                violation_error_message="This rate already has a tier with this weight.",
            ),
            models.CheckConstraint(
                condition=Q(up_to_g__gte=0) & Q(fee__gte=0),
                name="weighttier_non_negative",
                violation_error_message="Weight and fee cannot be negative.",
            ),
        ]

    def __str__(self) -> str:
        return f"up to {self.up_to_g} g"
