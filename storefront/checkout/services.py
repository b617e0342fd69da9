"""Placing an order from a reviewed cart: one order with one package per merchant, the
stock taken and a payment opened, in one transaction.

Locks are always taken in one order: the cart, then the offers by id (``checkout.stock``),
then (for status changes) the order and its packages.
"""

import re
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q

from storefront.carts.optimizer import CheaperAssignment, cart_cheaper_assignment_find
from storefront.carts.pricing_summary import (
    CartPricingSummary,
    cart_pricing_summary,
    cart_pricing_summary_via_sql,
)
from storefront.carts.services import cart_lock_for_update, cart_version_bump
from storefront.checkout.address import ShippingAddress
from storefront.checkout.ratelimit import order_place_rate_check
from storefront.checkout.review import (
    CheckoutChanged,
    review_changes,
    review_token_make,
    review_token_read,
)
from storefront.checkout.stock import offers_lock, stock_take
from storefront.errors import Conflict, ValidationFailed
from storefront.models import (
    Cart,
    CartLine,
    Merchant,
    MerchantOrder,
    Order,
    OrderEvent,
    OrderLine,
    Payment,
)

IDEMPOTENCY_KEY_RE = re.compile(r"^[A-Za-z0-9_.:-]{8,100}$")


@dataclass(frozen=True)
class CheckoutReview:
    """The cart priced now, the token that places exactly that, and a cheaper way to buy
    it (``None``: none found, or the cart cannot be bought as it stands)."""

    summary: CartPricingSummary
    review_token: str
    cheaper: CheaperAssignment | None


def checkout_review_prepare(*, cart: Cart) -> CheckoutReview:
    """The checkout review of ``cart`` for the web page and the API alike: priced once, live
    (never a cached page), sealed in a review token, with a last look for a cheaper cart
    within ``CHECKOUT_OPTIMIZE_BUDGET_MS`` (which may store a suggestion to apply)."""
    summary = cart_pricing_summary(cart=cart)
    cheaper = None
    if not summary.is_empty and not summary.unavailable:
        cheaper = cart_cheaper_assignment_find(
            cart=cart, budget_ms=settings.CHECKOUT_OPTIMIZE_BUDGET_MS
        )
    return CheckoutReview(summary=summary, review_token=review_token_make(summary), cheaper=cheaper)


def _check_key(key: object) -> str:
    if not isinstance(key, str) or not IDEMPOTENCY_KEY_RE.match(key):
        raise ValidationFailed(
            "The idempotency key must be 8 to 100 letters, digits or '_.:-'.",
            code="idempotency_key_invalid",
            field="idempotency_key",
        )
    return key


def order_scope(*, user, cart: Cart) -> str:
    """Whose idempotency keys a key is unique among: the signed-in user, else the guest cart."""
    if user is not None and user.is_authenticated:
        return f"user:{user.pk}"
    return f"cart:{cart.pk}"


def _order_by_key(*, scope: str, key: str, cart: Cart) -> Order | None:
    """The order ``key`` placed already: in the caller's scope, or as a guest from a cart
    that signing in merged into ``cart`` since (the order follows it: ``Order.cart``), so
    placing it again after a sign-in answers that order instead of a review of the merge."""
    orders = Order.objects.filter(Q(idempotency_scope=scope) | Q(cart_id=cart.pk))
    return orders.filter(idempotency_key=key).order_by("pk").first()


def order_place(
    *,
    cart: Cart,
    user,
    address: ShippingAddress,
    review_token: str,
    idempotency_key: str,
    rate_limit_ident: str | None = None,
) -> Order:
    """Places the reviewed cart as one order with one package per merchant, takes the stock
    and opens a payment; empties the cart. The same key again (a double click, a retried
    request) returns the order it placed, never a second one.

    Refused with ``CheckoutChanged`` (409, nothing written) when anything differs from the
    review, ``Conflict`` when the cart is empty, ``ValidationFailed`` for bad input.

    ``rate_limit_ident`` (``checkout.ratelimit.order_place_ident`` of the request) counts the
    attempt against the order rate limit first, ``Throttled`` once it is used up; without it
    nothing is counted, for a caller that counts on its own.
    """
    if rate_limit_ident is not None:
        order_place_rate_check(ident=rate_limit_ident)
    key = _check_key(idempotency_key)
    scope = order_scope(user=user, cart=cart)
    existing = _order_by_key(scope=scope, key=key, cart=cart)
    if existing is not None:
        return existing
    before = review_token_read(review_token, cart_id=cart.pk)
    try:
        with transaction.atomic():
            return _place_locked(
                cart=cart, user=user, address=address, before=before, scope=scope, key=key
            )
    except IntegrityError:
        # The same key committed by a concurrent request between our check and insert.
        existing = _order_by_key(scope=scope, key=key, cart=cart)
        if existing is None:
            raise
        return existing


def _place_locked(
    *, cart: Cart, user, address: ShippingAddress, before, scope: str, key: str
) -> Order:
    locked = cart_lock_for_update(cart)
    # The first of two racing requests committed.
    existing = _order_by_key(scope=scope, key=key, cart=locked)
    if existing is not None:
        return existing
    offer_ids = CartLine.objects.filter(cart_id=locked.pk).values_list("offer_id", flat=True)
    offers = offers_lock(offer_ids)
    summary = cart_pricing_summary_via_sql(cart=locked)
    if summary.is_empty:
        raise Conflict("Your cart is empty.", code="cart_empty", field="cart")
    changes = review_changes(before=before, summary=summary, postal_code=address.postal_code)
    if locked.postal_code != address.postal_code and not any(
        change["code"] == "destination_changed" for change in changes
    ):
        changes.append(
            {
                "code": "destination_changed",
                "message": f"The cart is priced for {locked.postal_code or 'no postal code'}, "
                f"the address is in {address.postal_code}.",
            }
        )
    if changes:
        raise CheckoutChanged(
            "Your cart changed since you reviewed it: "
            + " ".join(change["message"] for change in changes),
            changes=changes,
            total=summary.total,
        )
    order = _order_create(
        summary=summary, cart=locked, user=user, address=address, scope=scope, key=key
    )
    stock_take(summary=summary, offers=offers)
    CartLine.objects.filter(cart_id=locked.pk).delete()
    cart_version_bump(cart, locked=locked)
    return order


def _order_create(
    *, summary, cart: Cart, user, address: ShippingAddress, scope: str, key: str
) -> Order:
    order = Order.objects.create(
        owner=user if user is not None and user.is_authenticated else None,
        cart=cart,
        idempotency_scope=scope,
        idempotency_key=key,
        email=address.email,
        full_name=address.full_name,
        address_line=address.address_line,
        city=address.city,
        postal_code=address.postal_code,
        country=address.country,
        currency=summary.currency,
        subtotal=summary.subtotal,
        discount=summary.discount,
        shipping=summary.shipping,
        total=summary.total,
    )
    rates = _commission_rates(merchant_ids=[group.merchant_id for group in summary.groups])
    packages = MerchantOrder.objects.bulk_create(
        MerchantOrder(
            order=order,
            merchant_id=group.merchant_id,
            merchant_name=group.merchant_name,
            subtotal=group.subtotal,
            units=group.units,
            discount=group.discount,
            shipping=group.shipping,
            cost=group.total,
            commission_bps=rates[group.merchant_id],
            parcels=_parcels(group),
        )
        for group in summary.groups
    )
    lines = [
        _order_line(package, priced)
        for package, group in zip(packages, summary.groups, strict=True)
        for priced in group.lines
    ]
    OrderLine.objects.bulk_create(lines)
    by = order.owner
    OrderEvent.objects.create(order=order, to_status=Order.Status.PENDING, by=by)
    Payment.objects.create(
        order=order,
        variant="default",
        currency=order.currency,
        total=Decimal(order.total) / 100,
        delivery=Decimal(order.shipping) / 100,
        description=f"Smart Cart order {order.number}",
        billing_email=order.email,
        billing_postcode=order.postal_code,
        billing_country_code=order.country,
    )
    return order


def _commission_rates(*, merchant_ids: list[int]) -> dict[int, int]:
    """The commission in force now for each merchant: its own rate, else the shop's."""
    own = dict(Merchant.objects.filter(pk__in=merchant_ids).values_list("pk", "commission_bps"))
    default: int = settings.MARKETPLACE_COMMISSION_BPS
    rates = {pk: own.get(pk) for pk in merchant_ids}
    return {pk: default if rate is None else rate for pk, rate in rates.items()}


def _parcels(group) -> list[dict]:
    """The package's parcels as ``MerchantOrder.parcels`` keeps them, with the weight as the
    pages show it (a merchant without warehouses: one, ``warehouse_id`` None)."""
    return [
        {
            "warehouse_id": parcel.warehouse_id,
            "warehouse_name": parcel.warehouse_name,
            "units": parcel.units,
            "weight_g": parcel.weight_g,
            "weight_kg": parcel.weight_kg,
            "fee": parcel.fee,
        }
        for parcel in group.parcels
    ]


def _order_line(package: MerchantOrder, priced) -> OrderLine:
    line = priced.line
    return OrderLine(
        merchant_order=package,
        product_id=line.product_id,
        offer_id=line.offer_id,
        warehouse_id=priced.warehouse_id,
        product_name=line.product.name,
        gtin=line.product.gtin,
        merchant_sku=line.offer.merchant_sku,
        unit_price=priced.unit_price,
        quantity=priced.quantity,
        line_total=priced.line_total,
    )
