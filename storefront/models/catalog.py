from collections.abc import Iterable

from django.contrib.postgres.search import SearchVectorField
from django.core.validators import MaxValueValidator
from django.db import models
from django.db.models import Q
from django.db.models.functions import Now

from storefront.models.fields import MAX_MONEY_CENTS, MoneyField
from storefront.models.merchants import Merchant
from storefront.money import format_money
from storefront.validators import gtin_normalize, validate_gtin

# One tonne per unit: with MAX_PER_KG_OVER_CENTS and the cart limits, the worst weight fee of a
# cart stays far inside the engine's money limit.
MAX_WEIGHT_G = 1_000_000


def stock_covers(stock: int | None, quantity: int) -> bool:
    """The pricing contract's stock rule: ``None`` is unlimited, else at least ``quantity``."""
    return stock is None or stock >= quantity


def most_at_one(stocks: Iterable[int | None]) -> int | None:
    """The most one line can have from stock held in several places that each ship a line
    whole (a merchant's warehouses): the largest (``None``: one holds unlimited stock; 0 when
    none holds any)."""
    best = 0
    for stock in stocks:
        if stock is None:
            return None
        best = max(best, stock)
    return best


class Category(models.Model):
    name = models.CharField(max_length=120, unique=True)
    slug = models.SlugField(max_length=120, unique=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "categories"

    def __str__(self) -> str:
        return self.name


class Product(models.Model):
    gtin = models.CharField(
        "GTIN",
        max_length=14,
        unique=True,
        validators=[validate_gtin],
        help_text="8, 12, 13 or 14 digits including the check digit.",
    )
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=220, unique=True)
    brand = models.CharField(max_length=80, blank=True)
    category = models.ForeignKey(Category, on_delete=models.PROTECT, related_name="products")
    description = models.TextField(blank=True)
    # A small self-contained SVG picture (the demo seed draws one); shown as a data URI in an
    # <img>, where an SVG cannot run scripts.
    image_svg = models.TextField("image (SVG)", blank=True)
    weight_g = models.PositiveIntegerField(
        "weight (g)",
        default=0,
        # Raw SQL writers (the feed import) insert products without naming this column.
        db_default=0,
        validators=[MaxValueValidator(MAX_WEIGHT_G)],
        help_text="Grams per unit, for parcel rates by weight. 0: weightless.",
    )
    # PostgreSQL's full-text document of name, brand and description, written by a trigger
    # (storefront.search.postgres) on every insert and update, however the row is written;
    # stored so that ranking reads it instead of parsing every match's text again. Unused
    # (NULL) on SQLite.
    search_document = SearchVectorField(null=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        indexes = [models.Index(fields=["name"], name="product_name_idx")]

    def __str__(self) -> str:
        return self.name

    def clean_fields(self, exclude=None) -> None:
        # People paste GTINs from labels with spaces and dashes; store the digits only.
        self.gtin = gtin_normalize(self.gtin or "")
        super().clean_fields(exclude=exclude)


class Offer(models.Model):
    """A merchant's price and stock for a product. ``stock`` null means unlimited."""

    product = models.ForeignKey(Product, on_delete=models.CASCADE, related_name="offers")
    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="offers")
    merchant_sku = models.CharField("merchant SKU", max_length=64)
    unit_price = MoneyField(help_text="Price of one unit.")
    stock = models.PositiveIntegerField(
        null=True, blank=True, help_text="Units available. Empty: unlimited."
    )
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["unit_price", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["merchant", "merchant_sku"],
                name="offer_unique_sku_per_merchant",
                violation_error_message="This merchant already uses this SKU.",
            ),
            # Inactive offers are history (a feed may switch SKUs); only one may sell.
            models.UniqueConstraint(
                fields=["product", "merchant"],
                condition=Q(active=True),
                name="offer_one_active_per_product_merchant",
                violation_error_message="This merchant already has an active offer for "
                "this product.",
            ),
            models.CheckConstraint(
                condition=Q(unit_price__gte=0, unit_price__lte=MAX_MONEY_CENTS),
                name="offer_unit_price_range",
                violation_error_message="The unit price cannot be negative or absurdly large.",
            ),
            models.CheckConstraint(
                condition=Q(stock__isnull=True) | Q(stock__gte=0),
                name="offer_stock_non_negative",
                violation_error_message="Stock cannot be negative.",
            ),
        ]
        indexes = [
            # The cheapest active offer of a product is read on every catalog page.
            models.Index(
                fields=["product", "active", "unit_price"], name="offer_product_price_idx"
            ),
            # Search puts a product whose SKU is the query first, whatever the merchant.
            models.Index(fields=["merchant_sku"], name="offer_sku_idx"),
            # The catalog's merchant facet counts every active offer per merchant on the
            # unfiltered pages: an index-only scan of this is a third of the table scan.
            models.Index(
                fields=["merchant"], condition=Q(active=True), name="offer_active_merchant_idx"
            ),
        ]

    def __str__(self) -> str:
        # Admin autocomplete shows this; OfferAdmin selects product and merchant with it.
        return f"{self.product.name} · {self.merchant.name} · {format_money(self.unit_price)}"

    def can_supply(self, quantity: int) -> bool:
        """Whether this offer is eligible for a line of ``quantity`` (the contract's rule)."""
        return stock_covers(self.stock, quantity)


class ProductCheapest(models.Model):
    """A product's cheapest buyable offer as last computed by ``catalog_cheapest_recompute``
    (see storefront.catalog.cheapest): the cheapest active, in-stock offer of an active merchant,
    ties to the lowest merchant id, and how many such offers there are.

    Its own narrow table rather than columns on Product: a refresh rewrites it for up to the
    whole catalog at once, which here costs one small index per row instead of every index of
    the product table (measured: several times faster for a million products), and the
    products' rows and caches stay untouched. Selectors trust a row only while no
    ``CheapestOfferRefresh`` is pending for its product; no row means never computed.
    """

    product = models.OneToOneField(
        Product, primary_key=True, on_delete=models.CASCADE, related_name="stored_cheapest"
    )
    # No constraint, index or cascade: deleting an offer must not touch this table. A deleted
    # offer always leaves its product with a pending refresh (storefront.catalog.receivers), so a
    # dangling id here is never read.
    offer = models.ForeignKey(
        "Offer",
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,
        related_name="+",
    )
    price = MoneyField(null=True, blank=True, help_text="Its unit price, in cents.")
    offer_count = models.PositiveIntegerField(
        default=0, help_text="Offers a shopper could buy when computed."
    )
    updated_at = models.DateTimeField(help_text="When these values were last written.")

    class Meta:
        verbose_name = "stored cheapest offer"
        constraints = [
            models.CheckConstraint(
                condition=(Q(offer__isnull=True) & Q(price__isnull=True) & Q(offer_count=0))
                | (Q(offer__isnull=False) & Q(price__gte=0) & Q(offer_count__gte=1)),
                name="productcheapest_offer_price_count_agree",
                violation_error_message="A stored cheapest offer has a price and a count of "
                "at least 1; a product nobody sells has none of them.",
            ),
        ]

    def __str__(self) -> str:
        return f"cheapest of product {self.product_id}: offer {self.offer_id}"


class CheapestOfferRefresh(models.Model):
    """A pending refresh of one product's stored cheapest offer.

    Every write that can change a product's cheapest buyable offer (an offer saved, deleted or
    imported, a merchant switched on or off) inserts a row here in the same transaction; the
    refresh task recomputes the product and deletes exactly the rows it read. While a row
    exists, selectors ignore the stored values and read the offers live, so a shopper never
    sees a stale cheapest price. Writers only insert, never lock the product, so a big import
    and the refresh task do not block each other.
    """

    # No database constraint: an import inserts one row per changed offer and must not pay a
    # foreign-key check for each; rows of deleted products are dropped by the refresh task.
    product = models.ForeignKey(
        Product, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    # A database default, so raw SQL inserts (the feed import) need not pass it.
    requested_at = models.DateTimeField(db_default=Now())

    class Meta:
        verbose_name = "pending cheapest-offer refresh"

    def __str__(self) -> str:
        return f"refresh product {self.product_id}"
