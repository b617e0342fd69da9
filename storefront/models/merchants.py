from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from storefront.catalog.shipping import Discount, ShippingRule
from storefront.models.fields import MoneyField
from storefront.validators import postal_prefix_normalize, validate_postal_prefix

MAX_BASIS_POINTS = 10_000


def _non_negative(prefix: str, *fields: str) -> list[models.CheckConstraint]:
    return [
        models.CheckConstraint(
            condition=Q(**{f"{field}__gte": 0}),
            name=f"{prefix}_{field}_non_negative",
            violation_error_message=f"{field.replace('_', ' ').capitalize()} cannot be negative.",
        )
        for field in fields
    ]


def _free_over_non_negative(prefix: str) -> models.CheckConstraint:
    return models.CheckConstraint(
        condition=Q(free_over__isnull=True) | Q(free_over__gte=0),
        name=f"{prefix}_free_over_non_negative",
        violation_error_message="The free-shipping threshold cannot be negative.",
    )


class ShippingFields(models.Model):
    """The three shipping numbers of the pricing contract, shared by merchants and zones."""

    base_fee = MoneyField(default=0, help_text="Shipping for the first unit.")
    per_extra_unit = MoneyField(default=0, help_text="Shipping for each further unit.")
    free_over = MoneyField(
        null=True,
        blank=True,
        help_text="Shipping is free when goods (after discount) reach this. Empty: never free.",
    )

    class Meta:
        abstract = True


class Merchant(ShippingFields):
    name = models.CharField(max_length=120)
    slug = models.SlugField(max_length=120, unique=True)
    active = models.BooleanField(default=True)
    discount_min_units = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Units of one order that unlock the multi-item discount. Empty: no discount.",
    )
    discount_basis_points = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MaxValueValidator(MAX_BASIS_POINTS)],
        help_text="Discount in hundredths of a percent (500 = 5%). Empty: no discount.",
    )
    commission_bps = models.PositiveIntegerField(
        "commission (basis points)",
        null=True,
        blank=True,
        validators=[MaxValueValidator(MAX_BASIS_POINTS)],
        help_text="The marketplace's cut in hundredths of a percent (1000 = 10%). Empty: the "
        "shop's default (MARKETPLACE_COMMISSION_BPS).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            *_non_negative("merchant", "base_fee", "per_extra_unit"),
            _free_over_non_negative("merchant"),
            models.CheckConstraint(
                condition=Q(discount_min_units__isnull=True, discount_basis_points__isnull=True)
                | Q(discount_min_units__isnull=False, discount_basis_points__isnull=False),
                name="merchant_discount_both_or_neither",
                violation_error_message="Set both discount fields (minimum units and basis "
                "points) or neither.",
            ),
            models.CheckConstraint(
                condition=Q(discount_min_units__isnull=True) | Q(discount_min_units__gte=1),
                name="merchant_discount_min_units_positive",
                violation_error_message="The discount needs at least 1 unit.",
            ),
            models.CheckConstraint(
                condition=Q(discount_basis_points__isnull=True)
                | Q(discount_basis_points__gte=0, discount_basis_points__lte=MAX_BASIS_POINTS),
                name="merchant_discount_basis_points_range",
                violation_error_message="Discount basis points must be between 0 and 10000.",
            ),
            models.CheckConstraint(
                condition=Q(commission_bps__isnull=True)
                | Q(commission_bps__gte=0, commission_bps__lte=MAX_BASIS_POINTS),
                name="merchant_commission_bps_range",
                violation_error_message="Commission basis points must be between 0 and 10000.",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        super().clean()
        if (self.discount_min_units is None) != (self.discount_basis_points is None):
            missing = (
                "discount_min_units" if self.discount_min_units is None else "discount_basis_points"
            )
            raise ValidationError(
                {missing: "Set both discount fields (minimum units and basis points) or neither."},
                code="discount_incomplete",
            )

    @property
    def discount(self) -> Discount | None:
        return Discount.from_columns(self.discount_min_units, self.discount_basis_points)

    def default_shipping_rule(self) -> ShippingRule:
        return ShippingRule(
            base_fee=self.base_fee,
            per_extra_unit=self.per_extra_unit,
            free_over=self.free_over,
            zone_prefix=None,
        )


class ShippingZone(ShippingFields):
    """Shipping that replaces the merchant's defaults for postal codes starting with a prefix.

    The prefix is stored without spaces or dashes, upper-case (see ``postal_match_key``);
    empty means everywhere. The longest matching prefix wins.
    """

    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="zones")
    postal_prefix = models.CharField(
        max_length=10,
        blank=True,
        validators=[validate_postal_prefix],
        help_text="Postal codes starting with this (letters and digits). Empty: everywhere.",
    )
    name = models.CharField(max_length=80, blank=True, help_text="For people, e.g. 'Islands'.")

    class Meta:
        ordering = ["merchant_id", "postal_prefix"]
        constraints = [
            models.UniqueConstraint(
                fields=["merchant", "postal_prefix"],
                name="zone_unique_prefix_per_merchant",
                violation_error_message="This merchant already has a zone with this prefix.",
            ),
            *_non_negative("zone", "base_fee", "per_extra_unit"),
            _free_over_non_negative("zone"),
        ]

    def __str__(self) -> str:
        return f"{self.merchant.name}: {self.postal_prefix or 'everywhere'}"

    def clean_fields(self, exclude=None) -> None:
        # Normalise before the field validators run, so "sw1 a" is stored and checked as "SW1A".
        self.postal_prefix = postal_prefix_normalize(self.postal_prefix or "")
        super().clean_fields(exclude=exclude)

    def shipping_rule(self) -> ShippingRule:
        return ShippingRule(
            base_fee=self.base_fee,
            per_extra_unit=self.per_extra_unit,
            free_over=self.free_over,
            zone_prefix=self.postal_prefix,
        )
