"""Writes to carts. Each service is one transaction: it locks the cart row, checks, writes,
and bumps ``Cart.version``, so a failure leaves nothing half-written and concurrent edits of
one cart queue up instead of losing updates.

Errors are ``storefront.errors`` domain errors: ``ValidationFailed`` (bad input, 400),
``NotFound`` (404), ``Conflict`` (valid input the current state refuses, 409).
"""

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from storefront.carts.fulfillment import line_merchant_has_warehouse, merchant_has_warehouse
from storefront.carts.placement import cart_line_warehouse_pick
from storefront.errors import Conflict, NotFound, ValidationFailed
from storefront.models import (
    MAX_CART_LINES,
    MAX_LINE_QUANTITY,
    Cart,
    CartLine,
    Offer,
    Order,
)
from storefront.validators import postal_code_normalize, validate_postal_code


def cart_lock_for_update(cart: Cart) -> Cart:
    """``cart``'s row, locked for the current transaction (``NotFound`` once it is gone)."""
    try:
        return Cart.objects.select_for_update().get(pk=cart.pk)
    except Cart.DoesNotExist:
        raise NotFound("No such cart.", code="cart_not_found", field="cart") from None


def cart_version_bump(cart: Cart, *, locked: Cart) -> None:
    """Increments the version in SQL (never a read-modify-write in Python) and copies the
    new value onto the caller's instance."""
    Cart.objects.filter(pk=locked.pk).update(version=F("version") + 1, updated_at=timezone.now())
    locked.refresh_from_db(fields=["version", "updated_at"])
    cart.version = locked.version
    cart.updated_at = locked.updated_at


def _check_quantity(quantity: object) -> int:
    if isinstance(quantity, bool) or not isinstance(quantity, int):
        raise ValidationFailed(
            f"Quantity must be a whole number, got {quantity!r}.",
            code="quantity_invalid",
            field="quantity",
        )
    if quantity < 1:
        raise ValidationFailed(
            f"Quantity must be at least 1, got {quantity}; remove the line instead.",
            code="quantity_too_small",
            field="quantity",
        )
    if quantity > MAX_LINE_QUANTITY:
        raise ValidationFailed(
            f"Quantity must be at most {MAX_LINE_QUANTITY}, got {quantity}.",
            code="quantity_too_large",
            field="quantity",
        )
    return quantity


def _check_buyable(offer: Offer, quantity: int) -> None:
    """Refuses an inactive offer, and a quantity over a version 1 offer's stock. A merchant
    with warehouses (``_v2``) is judged per warehouse by ``cart_line_warehouse_pick``: its
    offer's stock is the sum over them, which no line can have."""
    if not offer.active or not offer.merchant.active:
        raise Conflict("This offer is no longer available.", code="offer_inactive", field="offer")
    if not getattr(offer, "_v2", False) and not offer.can_supply(quantity):
        raise Conflict(
            f"Only {offer.stock} in stock at {offer.merchant.name}; you asked for {quantity}.",
            code="insufficient_stock",
            field="quantity",
        )


def _fresh_offer(offer: Offer) -> Offer:
    """Re-reads the offer inside the transaction: price, stock and state may have changed
    since the caller loaded it. ``_v2``: its merchant ships from warehouses (same query)."""
    try:
        return (
            Offer.objects.select_related("merchant", "product")
            .annotate(_v2=merchant_has_warehouse())
            .get(pk=offer.pk)
        )
    except Offer.DoesNotExist:
        raise NotFound("No such offer.", code="offer_not_found", field="offer") from None


def _line_in_cart(locked: Cart, line_id: int) -> CartLine:
    try:
        return (
            CartLine.objects.select_for_update()
            .select_related("offer__merchant")
            .annotate(_v2=line_merchant_has_warehouse())
            .get(pk=line_id, cart_id=locked.pk)
        )
    except (CartLine.DoesNotExist, ValueError, TypeError):
        raise NotFound(
            "This line is not in your cart.", code="cart_line_not_found", field="line_id"
        ) from None


def cart_get_or_create(*, user=None, session_key: str | None = None) -> Cart:
    """The signed-in user's cart, else the anonymous session's cart, created when missing.

    Safe under concurrency: two requests racing to create the same cart both get the one
    that won (the database's unique constraints decide).
    """
    if user is not None and getattr(user, "is_authenticated", False):
        lookup = {"owner": user}
        defaults = {"session_key": ""}
    elif session_key:
        lookup = {"owner": None, "session_key": session_key}
        defaults = {}
    else:
        raise ValidationFailed(
            "A cart needs a signed-in user or a session.", code="cart_owner_missing", field="user"
        )
    try:
        with transaction.atomic():
            cart, _ = Cart.objects.get_or_create(**lookup, defaults=defaults)
    except IntegrityError:
        cart = Cart.objects.get(**lookup)
    return cart


@transaction.atomic
def cart_line_add(*, cart: Cart, offer: Offer, quantity: int = 1) -> CartLine:
    """Adds ``quantity`` units of the offer's product, bought from that offer.

    A line for the same product already in the cart grows by ``quantity``; if it was
    bought from another offer (another merchant), it moves to this offer and its price
    snapshot is retaken. Refused when the offer or merchant is inactive, stock is short,
    the quantity leaves 1..MAX_LINE_QUANTITY or the cart already has MAX_CART_LINES lines.
    """
    quantity = _check_quantity(quantity)
    locked = cart_lock_for_update(cart)
    offer = _fresh_offer(offer)
    line = (
        CartLine.objects.select_for_update()
        .filter(cart_id=locked.pk, product_id=offer.product_id)
        .first()
    )
    if line is None:
        if CartLine.objects.filter(cart_id=locked.pk).count() >= MAX_CART_LINES:
            raise Conflict(
                f"A cart holds at most {MAX_CART_LINES} different products.",
                code="cart_full",
                field="offer",
            )
        _check_buyable(offer, quantity)
        line = CartLine.objects.create(
            cart_id=locked.pk,
            product_id=offer.product_id,
            offer=offer,
            quantity=quantity,
            unit_price_snapshot=offer.unit_price,
            warehouse_id=cart_line_warehouse_pick(cart=locked, offer=offer, quantity=quantity),
        )
    else:
        total = _check_quantity(line.quantity + quantity)
        _check_buyable(offer, total)
        if line.offer_id != offer.pk:
            line.offer = offer
            line.unit_price_snapshot = offer.unit_price
        line.quantity = total
        line.warehouse_id = cart_line_warehouse_pick(cart=locked, offer=offer, quantity=total)
        line.save(
            update_fields=["offer", "unit_price_snapshot", "quantity", "warehouse", "updated_at"]
        )
    cart_version_bump(cart, locked=locked)
    return line


@transaction.atomic
def cart_line_set_quantity(*, cart: Cart, line_id: int, quantity: int) -> CartLine:
    """Sets a line's quantity (1..MAX_LINE_QUANTITY; use ``cart_line_remove`` for 0).

    Raising the quantity needs the offer to be buyable with enough stock; lowering it is
    always allowed, so a shopper can fix a line whose stock shrank. Setting the quantity it
    already has changes nothing and keeps the version.
    """
    quantity = _check_quantity(quantity)
    locked = cart_lock_for_update(cart)
    line = _line_in_cart(locked, line_id)
    if quantity == line.quantity:
        return line
    raising = quantity > line.quantity
    line.offer._v2 = line._v2  # type: ignore[attr-defined]
    if raising:
        _check_buyable(line.offer, quantity)
    line.quantity = quantity
    # A version 2 line ships from the warehouse that is cheapest for its new quantity; a
    # lowered quantity no warehouse has yet is still allowed (the cart flags it).
    try:
        line.warehouse_id = cart_line_warehouse_pick(
            cart=locked, offer=line.offer, quantity=quantity
        )
    except Conflict:
        if raising:
            raise
    line.save(update_fields=["quantity", "warehouse", "updated_at"])
    cart_version_bump(cart, locked=locked)
    return line


@transaction.atomic
def cart_line_set_offer(*, cart: Cart, line_id: int, offer: Offer) -> CartLine:
    """Buys a line from another offer of the same product, keeping its quantity."""
    locked = cart_lock_for_update(cart)
    line = _line_in_cart(locked, line_id)
    offer = _fresh_offer(offer)
    if offer.product_id != line.product_id:
        raise ValidationFailed(
            "The offer is for another product than the line.",
            code="offer_product_mismatch",
            field="offer",
        )
    if offer.pk == line.offer_id:
        return line
    _check_buyable(offer, line.quantity)
    line.offer = offer
    line.unit_price_snapshot = offer.unit_price
    line.warehouse_id = cart_line_warehouse_pick(cart=locked, offer=offer, quantity=line.quantity)
    line.save(update_fields=["offer", "unit_price_snapshot", "warehouse", "updated_at"])
    cart_version_bump(cart, locked=locked)
    return line


@transaction.atomic
def cart_line_remove(*, cart: Cart, line_id: int) -> None:
    locked = cart_lock_for_update(cart)
    _line_in_cart(locked, line_id).delete()
    cart_version_bump(cart, locked=locked)


@transaction.atomic
def cart_destination_set(*, cart: Cart, postal_code: str | None) -> Cart:
    """Sets the destination postal code (normalised: ``" sw1a 1aa "`` -> ``"SW1A 1AA"``);
    empty or ``None`` clears it. The same destination again changes nothing."""
    normalized = postal_code_normalize(postal_code or "")
    if normalized:
        try:
            validate_postal_code(normalized)
        except ValidationError as error:
            raise ValidationFailed(
                error.messages[0], code="postal_code_invalid", field="postal_code"
            ) from error
    locked = cart_lock_for_update(cart)
    if locked.postal_code != normalized:
        Cart.objects.filter(pk=locked.pk).update(postal_code=normalized)
        cart_version_bump(cart, locked=locked)
    cart.postal_code = normalized
    return cart


@transaction.atomic
def cart_merge(*, source: Cart, target: Cart) -> Cart:
    """Moves an anonymous cart into the signed-in user's cart at login, then deletes it.

    For a product in both carts the source line wins (offer, quantity and snapshot): it is
    what the shopper chose most recently. The target keeps its destination, or takes the
    source's when it has none. Lines are moved even past MAX_CART_LINES so nothing the
    shopper chose is silently dropped; adding more is refused until the cart shrinks.
    Orders placed from the source give their lines back to the target if their payment
    fails (``Order.cart``).
    """
    if source.pk == target.pk:
        return target
    # Lock in id order so two merges touching the same carts cannot deadlock.
    first, second = sorted((source, target), key=lambda cart: cart.pk)
    locked = {cart.pk: cart_lock_for_update(cart) for cart in (first, second)}
    locked_source, locked_target = locked[source.pk], locked[target.pk]
    Order.objects.filter(cart_id=locked_source.pk).update(cart_id=locked_target.pk)
    source_lines = list(CartLine.objects.filter(cart_id=locked_source.pk))
    if not source_lines and (locked_target.postal_code or not locked_source.postal_code):
        locked_source.delete()
        return target
    CartLine.objects.filter(
        cart_id=locked_target.pk, product_id__in=[line.product_id for line in source_lines]
    ).delete()
    CartLine.objects.filter(cart_id=locked_source.pk).update(
        cart_id=locked_target.pk, updated_at=timezone.now()
    )
    if not locked_target.postal_code and locked_source.postal_code:
        Cart.objects.filter(pk=locked_target.pk).update(postal_code=locked_source.postal_code)
        target.postal_code = locked_source.postal_code
    locked_source.delete()
    cart_version_bump(target, locked=locked_target)
    return target
