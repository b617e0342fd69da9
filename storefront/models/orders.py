"""Orders: what a shopper bought, one package per merchant, priced exactly as the cart was.

An ``Order`` is the shopper's purchase; each ``MerchantOrder`` is one merchant's package with
the pricing contract's breakdown of it (subtotal, discount, shipping, cost); ``OrderLine``
keeps what was bought as it was then (name, GTIN, SKU, unit price), so later catalog edits
never rewrite a receipt. Amounts are integer cents of ``currency``.
"""

import secrets

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.urls import reverse
from payments import PurchasedItem
from payments.models import BasePayment

from storefront.models.catalog import Offer, Product
from storefront.models.fields import MoneyField
from storefront.models.merchants import Merchant

DUMMY_PROVIDER = "payments.dummy.DummyProvider"

# No 0/O/1/I: the number is read aloud to support and typed from an e-mail.
_NUMBER_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
ORDER_NUMBER_LENGTH = 12


def order_number_new() -> str:
    """A public order number nobody can guess (about 60 bits from ``secrets``)."""
    return "".join(secrets.choice(_NUMBER_ALPHABET) for _ in range(ORDER_NUMBER_LENGTH))


class MerchantStaff(models.Model):
    """A user who works for one merchant: sees and handles that merchant's orders only."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="merchant_staff"
    )
    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="staff")

    class Meta:
        verbose_name = "merchant staff member"
        verbose_name_plural = "merchant staff"

    def __str__(self) -> str:
        return f"{self.user} at {self.merchant}"


# django-payments ships no types, so the stubs cannot see Payment's reverse manager.
class Order(models.Model):  # type: ignore[django-manager-missing]
    class Status(models.TextChoices):
        PENDING = "pending", "Awaiting payment"
        PAID = "paid", "Paid"
        FAILED = "failed", "Payment failed"
        CANCELLED = "cancelled", "Cancelled"

    number = models.CharField(max_length=20, unique=True, default=order_number_new, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="orders",
    )
    # Who may place with this key: "user:<id>" or "cart:<id>" for a guest's session cart.
    idempotency_scope = models.CharField(max_length=60, editable=False)
    idempotency_key = models.CharField(max_length=100, editable=False)
    # Where the lines go back when the payment fails: the cart it was placed from, moved to
    # the account's cart when signing in merges that (guest) cart away.
    cart = models.ForeignKey(
        "storefront.Cart",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        editable=False,
        related_name="+",
    )
    email = models.EmailField()
    full_name = models.CharField(max_length=120)
    address_line = models.CharField("street address", max_length=200)
    city = models.CharField(max_length=100)
    postal_code = models.CharField(max_length=10, help_text="The code the order was priced for.")
    country = models.CharField(max_length=2, help_text="ISO 3166-1 alpha-2 code.")
    currency = models.CharField(max_length=3)
    subtotal = MoneyField()
    discount = MoneyField()
    shipping = MoneyField()
    total = MoneyField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    placed_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Set by the mail task once the confirmation went out: a retried task sends it once.
    confirmation_sent_at = models.DateTimeField(null=True, blank=True, editable=False)
    # Sums of the order's ledger events (``PaymentEvent``), kept in the transaction that
    # writes each event; the events stay the record, these only make reads and checks cheap.
    amount_authorized = MoneyField(default=0, editable=False)
    amount_captured = MoneyField(default=0, editable=False)
    amount_refunded = MoneyField(default=0, editable=False)

    class Meta:
        ordering = ["-placed_at", "-id"]
        indexes = [models.Index(fields=["owner", "-placed_at"], name="order_owner_placed_idx")]
        constraints = [
            models.UniqueConstraint(
                fields=["idempotency_scope", "idempotency_key"],
                name="order_one_per_idempotency_key",
                violation_error_message="An order was already placed with this key.",
            ),
            models.CheckConstraint(
                condition=Q(discount__lte=F("subtotal"))
                & Q(total=F("subtotal") - F("discount") + F("shipping")),
                name="order_total_adds_up",
                violation_error_message="total = subtotal - discount + shipping.",
            ),
            models.CheckConstraint(
                condition=Q(amount_refunded__lte=F("amount_captured")),
                name="order_refunded_within_captured",
                violation_error_message="More refunded than captured.",
            ),
        ]

    def __str__(self) -> str:
        return f"Order {self.number}"

    def get_absolute_url(self) -> str:
        return reverse("order_detail", args=[self.number])

    @property
    def goods(self) -> int:
        return self.subtotal - self.discount

    @property
    def amount_due(self) -> int:
        """What the shopper owes for the packages not cancelled (prefetch-friendly)."""
        return sum(
            package.cost
            for package in self.merchant_orders.all()
            if package.status != MerchantOrder.Status.CANCELLED
        )

    @property
    def amount_net(self) -> int:
        """What the shop holds of the shopper's money now: captured less refunded."""
        return self.amount_captured - self.amount_refunded


class MerchantOrder(models.Model):
    """One merchant's package of an order. ``cost`` is the contract's ``cost(m)``; the
    merchant orders of an order add up to its total (a deferred trigger checks it on
    PostgreSQL, see migration 0006)."""

    class Status(models.TextChoices):
        PLACED = "placed", "Placed"
        ACCEPTED = "accepted", "Accepted"
        SHIPPED = "shipped", "Shipped"
        DELIVERED = "delivered", "Delivered"
        CANCELLED = "cancelled", "Cancelled"

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="merchant_orders")
    merchant = models.ForeignKey(Merchant, on_delete=models.PROTECT, related_name="orders")
    merchant_name = models.CharField(max_length=120)
    subtotal = MoneyField()
    units = models.PositiveIntegerField()
    discount = MoneyField()
    shipping = MoneyField()
    cost = MoneyField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PLACED)
    tracking_reference = models.CharField(max_length=100, blank=True)
    cancel_reason = models.CharField(max_length=300, blank=True)
    # Set once the cost of a cancelled package of a paid order went back to the shopper.
    refunded_at = models.DateTimeField(null=True, blank=True, editable=False)
    # Set once the shopper was mailed that the package shipped (the mail is sent once).
    shipped_mail_sent_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The marketplace's rate when the package was placed: a later change of the merchant's
    # rate or of the default never rewrites what was agreed for it.
    commission_bps = models.PositiveIntegerField("commission (basis points)", default=0)
    # The package's parcels as priced when placed (contract version 2): a list of
    # {"warehouse_id", "warehouse", "units", "weight_g", "fee"}; a receipt, so later rate or
    # weight changes never rewrite it. Empty for version 1 merchants (one parcel, ``shipping``).
    parcels = models.JSONField(default=list, blank=True, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["order_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["order", "merchant"], name="merchantorder_one_per_merchant"
            ),
            models.CheckConstraint(
                condition=Q(discount__lte=F("subtotal"))
                & Q(cost=F("subtotal") - F("discount") + F("shipping")),
                name="merchantorder_cost_adds_up",
                violation_error_message="cost = subtotal - discount + shipping.",
            ),
            models.CheckConstraint(
                condition=~Q(status__in=["shipped", "delivered"]) | ~Q(tracking_reference=""),
                name="merchantorder_shipped_has_tracking",
                violation_error_message="A shipped package needs a tracking reference.",
            ),
            models.CheckConstraint(
                condition=~Q(status="cancelled") | ~Q(cancel_reason=""),
                name="merchantorder_cancelled_has_reason",
                violation_error_message="A cancelled package needs a reason.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.order.number} · {self.merchant_name}"


class OrderLine(models.Model):
    merchant_order = models.ForeignKey(
        MerchantOrder, on_delete=models.CASCADE, related_name="lines"
    )
    # SET_NULL: the receipt outlives the catalog; the snapshot fields say what was bought.
    product = models.ForeignKey(Product, on_delete=models.SET_NULL, null=True, related_name="+")
    offer = models.ForeignKey(Offer, on_delete=models.SET_NULL, null=True, related_name="+")
    # The warehouse the line's stock was taken from (version 2 merchants; null for version 1):
    # a cancel puts the stock back there.
    warehouse = models.ForeignKey(
        "storefront.Warehouse", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    product_name = models.CharField(max_length=200)
    gtin = models.CharField("GTIN", max_length=14)
    merchant_sku = models.CharField("merchant SKU", max_length=64)
    unit_price = MoneyField()
    quantity = models.PositiveIntegerField()
    line_total = MoneyField()

    class Meta:
        ordering = ["merchant_order_id", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(quantity__gte=1) & Q(line_total=F("unit_price") * F("quantity")),
                name="orderline_total_adds_up",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.quantity} x {self.product_name}"


class OrderEvent(models.Model):
    """A status change of an order or of one of its packages: who, when, from what to what."""

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="events")
    merchant_order = models.ForeignKey(
        MerchantOrder, on_delete=models.CASCADE, null=True, blank=True, related_name="events"
    )
    from_status = models.CharField(max_length=10, blank=True)
    to_status = models.CharField(max_length=10)
    note = models.CharField(max_length=300, blank=True)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["at", "id"]

    def __str__(self) -> str:
        return f"{self.from_status or '-'} -> {self.to_status}"


class Payment(BasePayment):
    """A payment attempt for an order through django-payments (``PAYMENT_VARIANTS``)."""

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="payments")

    def get_failure_url(self) -> str:
        return self._return_url()

    def get_success_url(self) -> str:
        return self._return_url()

    def _return_url(self) -> str:
        """The order page. Absolute for real gateways, which send the shopper back from their
        own site; a path for the dummy provider, whose form is on this site (any host)."""
        path = reverse("order_detail", args=[self.order.number])
        if settings.PAYMENT_VARIANTS[self.variant][0] == DUMMY_PROVIDER:
            return path
        scheme = "https" if settings.PAYMENT_USES_SSL else "http"
        return f"{scheme}://{settings.PAYMENT_HOST}{path}"

    def get_purchased_items(self):
        for merchant_order in self.order.merchant_orders.all():
            for line in merchant_order.lines.all():
                yield PurchasedItem(
                    name=line.product_name,
                    sku=line.merchant_sku,
                    quantity=line.quantity,
                    price=_decimal(line.unit_price),
                    currency=self.currency,
                )


def _decimal(cents: int):
    from decimal import Decimal

    return Decimal(cents) / 100
