from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from storefront.models.catalog import Offer, Product
from storefront.models.fields import MoneyField
from storefront.validators import postal_code_normalize, validate_postal_code

# Bounds that keep carts humane and every total inside int64 (see MAX_MONEY_CENTS).
MAX_LINE_QUANTITY = 999
MAX_CART_LINES = 100


class Cart(models.Model):
    """A shopper's cart: owned by a user, or by an anonymous session until login.

    ``version`` grows with every change of lines or destination; a suggestion computed for
    one version is stale for any other.
    """

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="carts",
    )
    session_key = models.CharField(max_length=40, blank=True, default="")
    postal_code = models.CharField(
        "destination postal code",
        max_length=10,
        blank=True,
        validators=[validate_postal_code],
        help_text="Where the cart ships; selects each merchant's shipping zone.",
    )
    version = models.PositiveBigIntegerField(default=1, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(Q(owner__isnull=False) & Q(session_key=""))
                | (Q(owner__isnull=True) & ~Q(session_key="")),
                name="cart_owner_xor_session",
                violation_error_message="A cart belongs to a user or to an anonymous session, "
                "exactly one of them.",
            ),
            models.UniqueConstraint(
                fields=["owner"],
                condition=Q(owner__isnull=False),
                name="cart_one_per_owner",
                violation_error_message="This user already has a cart.",
            ),
            models.UniqueConstraint(
                fields=["session_key"],
                condition=~Q(session_key=""),
                name="cart_one_per_session",
                violation_error_message="This session already has a cart.",
            ),
            models.CheckConstraint(condition=Q(version__gte=1), name="cart_version_positive"),
        ]

    def __str__(self) -> str:
        who = f"user {self.owner_id}" if self.owner_id else f"session {self.session_key[:8]}…"
        return f"Cart {self.pk} ({who}, v{self.version})"

    def clean_fields(self, exclude=None) -> None:
        self.postal_code = postal_code_normalize(self.postal_code or "")
        super().clean_fields(exclude=exclude)

    def clean(self) -> None:
        super().clean()
        if (self.owner_id is None) == (not self.session_key):
            raise ValidationError(
                "A cart belongs to a user or to an anonymous session, exactly one of them.",
                code="cart_owner_xor_session",
            )


class CartLine(models.Model):
    """One product in a cart, bought from one offer.

    ``product`` repeats ``offer.product`` so the database itself can refuse a second line
    for the same product. ``unit_price_snapshot`` is the price when the line was added or
    its offer last chosen, so the cart can show a later price change.
    """

    cart = models.ForeignKey(Cart, on_delete=models.CASCADE, related_name="lines")
    product = models.ForeignKey(Product, on_delete=models.PROTECT, related_name="cart_lines")
    # PROTECT: an offer in someone's cart is deactivated, not deleted.
    offer = models.ForeignKey(Offer, on_delete=models.PROTECT, related_name="cart_lines")
    quantity = models.PositiveIntegerField(
        validators=[MinValueValidator(1), MaxValueValidator(MAX_LINE_QUANTITY)]
    )
    unit_price_snapshot = MoneyField(help_text="Unit price when added, in cents.")
    # The warehouse a version 2 merchant's line ships from (contract version 2's node); null
    # for version 1 merchants. SET_NULL: a deleted warehouse's lines get another one chosen.
    warehouse = models.ForeignKey(
        "storefront.Warehouse",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="cart_lines",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["cart", "product"],
                name="cartline_one_per_product",
                violation_error_message="This product is already in the cart.",
            ),
            models.CheckConstraint(
                condition=Q(quantity__gte=1, quantity__lte=MAX_LINE_QUANTITY),
                name="cartline_quantity_range",
                violation_error_message=f"Quantity must be between 1 and {MAX_LINE_QUANTITY}.",
            ),
            models.CheckConstraint(
                condition=Q(unit_price_snapshot__gte=0),
                name="cartline_unit_price_snapshot_non_negative",
                violation_error_message="The price snapshot cannot be negative.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.quantity} x offer {self.offer_id}"

    def clean(self) -> None:
        super().clean()
        both_set = self.offer_id is not None and self.product_id is not None
        if both_set and self.offer.product_id != self.product_id:
            raise ValidationError(
                {"offer": "The offer is for another product than the line."},
                code="offer_product_mismatch",
            )
