"""Writes of checkout: place an order from a reviewed cart, follow its payment, and the
merchant side (accept, ship, deliver, cancel).

Locks are always taken in one order: the cart, then the offers by id, then (for status
changes) the order and its packages; a failing order locks the cart its lines go back to
before the order, as a sign-in's cart merge does before moving orders to the account's cart.
Stock moves only under the offers' row locks, so two shoppers racing for the last unit get
one order and one ``Conflict``, never negative stock.
"""

import re
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.db.models import Case, F, Q, Value, When
from django.utils import timezone

from storefront.caching.versions import cache_versions_bump_on_commit
from storefront.carts.optimizer import CheaperAssignment, cart_cheaper_assignment_find
from storefront.carts.pricing_summary import (
    CartPricingSummary,
    cart_pricing_summary,
    cart_pricing_summary_via_sql,
)
from storefront.carts.services import cart_lock_for_update, cart_version_bump
from storefront.catalog.cheapest import (
    catalog_cheapest_mark_stale,
    catalog_cheapest_recompute_request,
)
from storefront.errors import Conflict, NotFound, ValidationFailed
from storefront.models import (
    Cart,
    CartLine,
    MerchantOrder,
    Offer,
    Order,
    OrderEvent,
    OrderLine,
    Payment,
)
from storefront.orders.review import (
    CheckoutChanged,
    review_changes,
    review_token_make,
    review_token_read,
)
from storefront.validators import postal_code_normalize, validate_postal_code

IDEMPOTENCY_KEY_RE = re.compile(r"^[A-Za-z0-9_.:-]{8,100}$")
_COUNTRY_RE = re.compile(r"^[A-Z]{2}$")


@dataclass(frozen=True)
class ShippingAddress:
    email: str
    full_name: str
    address_line: str
    city: str
    postal_code: str
    country: str


_ADDRESS_LIMITS = {"full_name": 120, "address_line": 200, "city": 100}


def shipping_address_validate(
    *,
    email: object,
    full_name: object,
    address_line: object,
    city: object,
    postal_code: object,
    country: object,
) -> ShippingAddress:
    """A clean address, or ``ValidationFailed`` naming the first field at fault."""
    texts = {"full_name": full_name, "address_line": address_line, "city": city}
    for field, value in texts.items():
        if not isinstance(value, str) or not value.strip():
            raise ValidationFailed("This field is required.", code="required", field=field)
        if len(value.strip()) > _ADDRESS_LIMITS[field]:
            raise ValidationFailed(
                f"At most {_ADDRESS_LIMITS[field]} characters.", code="too_long", field=field
            )
    if not isinstance(email, str) or len(email) > 254:
        raise ValidationFailed("Enter a valid e-mail address.", code="email_invalid", field="email")
    try:
        validate_email(email.strip())
    except ValidationError:
        raise ValidationFailed(
            "Enter a valid e-mail address.", code="email_invalid", field="email"
        ) from None
    code = postal_code_normalize(postal_code if isinstance(postal_code, str) else "")
    try:
        validate_postal_code(code)
    except ValidationError as error:
        raise ValidationFailed(
            error.messages[0], code="postal_code_invalid", field="postal_code"
        ) from None
    country_code = country.strip().upper() if isinstance(country, str) else ""
    if not _COUNTRY_RE.match(country_code):
        raise ValidationFailed(
            "Use the two-letter country code, e.g. DE.", code="country_invalid", field="country"
        )
    return ShippingAddress(
        email=email.strip(),
        full_name=str(full_name).strip(),
        address_line=str(address_line).strip(),
        city=str(city).strip(),
        postal_code=code,
        country=country_code,
    )


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
) -> Order:
    """Places the reviewed cart as one order with one package per merchant, takes the stock
    and opens a payment; empties the cart. The same key again (a double click, a retried
    request) returns the order it placed, never a second one.

    Refused with ``CheckoutChanged`` (409, nothing written) when anything differs from the
    review, ``Conflict`` when the cart is empty, ``ValidationFailed`` for bad input.
    """
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


def _lock_offers(offer_ids) -> dict[int, Offer]:
    """Row locks in id order: every checkout takes them in the same order (no deadlock)."""
    offers = Offer.objects.select_for_update(of=("self",)).filter(pk__in=set(offer_ids))
    return {offer.pk: offer for offer in offers.order_by("pk")}


def _place_locked(
    *, cart: Cart, user, address: ShippingAddress, before, scope: str, key: str
) -> Order:
    locked = cart_lock_for_update(cart)
    # The first of two racing requests committed.
    existing = _order_by_key(scope=scope, key=key, cart=locked)
    if existing is not None:
        return existing
    offer_ids = CartLine.objects.filter(cart_id=locked.pk).values_list("offer_id", flat=True)
    offers = _lock_offers(offer_ids)
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
    _stock_take(summary=summary, offers=offers)
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


def _order_line(package: MerchantOrder, priced) -> OrderLine:
    line = priced.line
    return OrderLine(
        merchant_order=package,
        product_id=line.product_id,
        offer_id=line.offer_id,
        product_name=line.product.name,
        gtin=line.product.gtin,
        merchant_sku=line.offer.merchant_sku,
        unit_price=priced.unit_price,
        quantity=priced.quantity,
        line_total=priced.line_total,
    )


def _stock_move(moves: dict[int, int], offers: dict[int, Offer]) -> None:
    """Adds ``moves[offer_id]`` (negative: takes) to each locked offer's finite stock and
    marks the products whose buyability may have flipped for a cheapest-offer refresh."""
    moves = {
        offer_id: delta
        for offer_id, delta in moves.items()
        if offer_id in offers and offers[offer_id].stock is not None and delta != 0
    }
    if not moves:
        return
    # One statement for every offer of the order.
    Offer.objects.filter(pk__in=moves).update(
        stock=F("stock") + Case(*(When(pk=pk, then=Value(delta)) for pk, delta in moves.items())),
        updated_at=timezone.now(),
    )
    # Product pages show the stock itself: theirs are re-rendered after the commit.
    cache_versions_bump_on_commit(product_ids=[offers[pk].product_id for pk in moves])
    stale = [
        offers[pk].product_id
        for pk, delta in moves.items()
        if offers[pk].stock in (0, -delta)  # sold out before, or now
    ]
    if stale and catalog_cheapest_mark_stale(product_ids=stale):
        catalog_cheapest_recompute_request()


def _stock_take(*, summary, offers: dict[int, Offer]) -> None:
    moves: dict[int, int] = {}
    for group in summary.groups:
        for line in group.lines:
            moves[line.offer_id] = moves.get(line.offer_id, 0) - line.quantity
    _stock_move(moves, offers)


def _stock_release(*, packages) -> None:
    """Gives back the stock of the packages' lines (offers deleted since: nothing to give)."""
    moves: dict[int, int] = {}
    for line in OrderLine.objects.filter(merchant_order__in=packages, offer__isnull=False):
        if line.offer_id is not None:
            moves[line.offer_id] = moves.get(line.offer_id, 0) + line.quantity
    _stock_move(moves, _lock_offers(moves))


# --- payment --------------------------------------------------------------------------------

_PAID = {"confirmed", "preauth"}
_FAILED = {"rejected", "error"}


@transaction.atomic
def order_payment_sync(*, payment_id: int) -> Order:
    """Sets the order's status from its payment's provider status: paid (and the
    confirmation mail queued), failed (every package cancelled, the stock given back, the
    lines put back into the shopper's cart) or
    still pending. Idempotent: a status seen before changes nothing."""
    payment = Payment.objects.get(pk=payment_id)
    if payment.status in _FAILED:
        order, cart = _order_lock_with_cart(order_id=payment.order_id)
    else:
        order, cart = Order.objects.select_for_update().get(pk=payment.order_id), None
    if order.status != Order.Status.PENDING:
        return order
    if payment.status in _PAID:
        _order_status_set(order, Order.Status.PAID, note=f"payment {payment.pk}")
        if payment.status == "confirmed" and not payment.captured_amount:
            # "confirmed" is charged in django-payments; some providers (the dummy's form)
            # do not fill in the amount, which a later partial refund needs.
            Payment.objects.filter(pk=payment.pk).update(captured_amount=payment.total)
        from storefront.orders.tasks import order_confirmation_mail_send_task

        order_id = order.pk
        transaction.on_commit(lambda: order_confirmation_mail_send_task.delay(order_id))
    elif payment.status in _FAILED:
        _order_fail(order, cart=cart, note=payment.message[:300], reason="Payment failed.")
    return order


def _order_lock_with_cart(*, order_id: int) -> tuple[Order, Cart | None]:
    """The order and the cart its lines go back to (``None`` once that is gone), both
    locked, the cart first: placing and a sign-in's cart merge lock the cart before they
    touch orders, so a failing payment never deadlocks with either."""
    cart_id = Order.objects.filter(pk=order_id).values_list("cart_id", flat=True).get()
    carts = Cart.objects.select_for_update()
    cart = carts.filter(pk=cart_id).first() if cart_id is not None else None
    order = Order.objects.select_for_update().get(pk=order_id)
    if order.cart_id != cart_id:
        # A sign-in merged the cart into the account's cart between the two reads. Nothing
        # merges an account's cart away, so locking it after the order cannot deadlock.
        cart = carts.filter(pk=order.cart_id).first() if order.cart_id is not None else None
    return order, cart


def _order_fail(order: Order, *, cart: Cart | None, note: str, reason: str) -> None:
    """Fails a pending order, locked with ``cart`` (``_order_lock_with_cart``): its packages
    are cancelled, their stock given back and its lines put back into that cart, so the
    shopper can try again."""
    _order_status_set(order, Order.Status.FAILED, note=note)
    _packages_cancel(order, reason=reason, by=None)
    if cart is not None:
        _cart_restore(cart=cart, order=order)


def _cart_restore(*, cart: Cart, order: Order) -> int:
    """Adds the order's lines back to ``cart`` with their offers and quantities; a product
    the shopper put in the cart again since keeps that newer line, an offer or product
    deleted since is left out. Returns how many lines came back."""
    in_cart = set(CartLine.objects.filter(cart_id=cart.pk).values_list("product_id", flat=True))
    lines = [
        CartLine(
            cart_id=cart.pk,
            product_id=line.product_id,
            offer_id=line.offer_id,
            quantity=line.quantity,
            unit_price_snapshot=line.unit_price,
        )
        for line in OrderLine.objects.filter(merchant_order__order=order).order_by("pk")
        if line.product_id is not None
        and line.offer_id is not None
        and line.product_id not in in_cart
    ]
    if lines:
        CartLine.objects.bulk_create(lines)
        Cart.objects.filter(pk=cart.pk).update(version=F("version") + 1, updated_at=timezone.now())
    return len(lines)


def _order_status_set(order: Order, status: str, *, note: str = "", by=None) -> None:
    OrderEvent.objects.create(
        order=order, from_status=order.status, to_status=status, note=note, by=by
    )
    order.status = status
    order.save(update_fields=["status", "updated_at"])


def _packages_cancel(order: Order, *, reason: str, by) -> None:
    packages = list(
        MerchantOrder.objects.select_for_update()
        .filter(order=order)
        .exclude(status=MerchantOrder.Status.CANCELLED)
        .order_by("pk")
    )
    for package in packages:
        _package_status_set(package, MerchantOrder.Status.CANCELLED, by=by, note=reason)
    MerchantOrder.objects.filter(pk__in=[package.pk for package in packages]).update(
        status=MerchantOrder.Status.CANCELLED, cancel_reason=reason, updated_at=timezone.now()
    )
    _stock_release(packages=packages)


def _package_status_set(package: MerchantOrder, status: str, *, by, note: str = "") -> None:
    OrderEvent.objects.create(
        order_id=package.order_id,
        merchant_order=package,
        from_status=package.status,
        to_status=status,
        note=note,
        by=by,
    )
    package.status = status


def order_payment_for(*, order: Order) -> Payment:
    """The payment to show the shopper: the latest one (created with the order)."""
    payment = order.payments.order_by("-pk").first()
    if payment is None:
        raise NotFound("This order has no payment.", code="payment_not_found")
    return payment


# --- merchant side --------------------------------------------------------------------------

_TRANSITIONS = {
    "accept": ({MerchantOrder.Status.PLACED}, MerchantOrder.Status.ACCEPTED),
    "ship": ({MerchantOrder.Status.ACCEPTED}, MerchantOrder.Status.SHIPPED),
    "deliver": ({MerchantOrder.Status.SHIPPED}, MerchantOrder.Status.DELIVERED),
    "cancel": (
        {MerchantOrder.Status.PLACED, MerchantOrder.Status.ACCEPTED},
        MerchantOrder.Status.CANCELLED,
    ),
}


def merchant_order_can_act(*, user, package: MerchantOrder) -> bool:
    """Catalog admins act on every package; merchant staff only on their merchant's."""
    staff = getattr(user, "merchant_staff", None) if user.is_authenticated else None
    if staff is not None:
        return staff.merchant_id == package.merchant_id
    return user.is_active and user.is_staff and user.has_perm("storefront.change_merchantorder")


def _text(value: object, *, field: str, limit: int) -> str:
    text = value.strip() if isinstance(value, str) else ""
    if not text:
        raise ValidationFailed("This field is required.", code="required", field=field)
    if len(text) > limit:
        raise ValidationFailed(f"At most {limit} characters.", code="too_long", field=field)
    return text


@transaction.atomic
def merchant_order_transition(
    *, package: MerchantOrder, action: str, user, tracking_reference: str = "", reason: str = ""
) -> MerchantOrder:
    """Moves a package on (``accept``, ``ship`` with a tracking reference, ``deliver``,
    ``cancel`` with a reason, which gives its stock back), recording who and when. Someone
    who may not act on it gets ``NotFound``; a move its status does not allow, ``Conflict``.
    Only paid orders are accepted or shipped."""
    if action not in _TRANSITIONS:
        raise ValidationFailed(f"Unknown action {action!r}.", code="action_invalid", field="action")
    if not merchant_order_can_act(user=user, package=package):
        raise NotFound("No such order.", code="order_not_found")
    tracking = (
        _text(tracking_reference, field="tracking_reference", limit=100)
        if (action == "ship")
        else ""
    )
    why = _text(reason, field="reason", limit=300) if action == "cancel" else ""
    order = Order.objects.select_for_update().get(pk=package.order_id)
    package = MerchantOrder.objects.select_for_update().get(pk=package.pk)
    allowed, target = _TRANSITIONS[action]
    if package.status not in allowed:
        raise Conflict(
            f"A package that is {package.get_status_display().lower()} cannot be "
            f"{target.label.lower()}.",
            code="status_invalid",
            field="action",
        )
    if action in ("accept", "ship") and order.status != Order.Status.PAID:
        raise Conflict("The order is not paid yet.", code="order_not_paid", field="action")
    _package_status_set(package, target, by=user, note=tracking or why)
    package.tracking_reference = tracking or package.tracking_reference
    package.cancel_reason = why or package.cancel_reason
    package.save(update_fields=["status", "tracking_reference", "cancel_reason", "updated_at"])
    if action == "cancel":
        _stock_release(packages=[package])
        if order.status == Order.Status.PAID:
            from storefront.orders.tasks import merchant_order_refund_task

            package_id = package.pk
            transaction.on_commit(lambda: merchant_order_refund_task.delay(package_id))
        if not order.merchant_orders.exclude(status=MerchantOrder.Status.CANCELLED).exists():
            _order_status_set(order, Order.Status.CANCELLED, by=user, note=why)
    return package


@transaction.atomic
def merchant_order_refund(*, merchant_order_id: int) -> bool:
    """Gives a cancelled package's cost back through the provider (a partial refund of the
    order's confirmed payment), once: the package row stays locked while the provider is
    asked. ``False`` when there is nothing (more) to refund."""
    from payments import PaymentStatus

    package = MerchantOrder.objects.select_for_update().get(pk=merchant_order_id)
    if package.status != MerchantOrder.Status.CANCELLED or package.refunded_at is not None:
        return False
    payment = (
        Payment.objects.filter(order_id=package.order_id, status=PaymentStatus.CONFIRMED)
        .order_by("-pk")
        .first()
    )
    if payment is None or package.cost == 0:
        return False
    payment.refund(amount=Decimal(package.cost) / 100)
    OrderEvent.objects.create(
        order_id=package.order_id,
        merchant_order=package,
        from_status=package.status,
        to_status=package.status,
        note=f"Refunded {package.cost} cents.",
    )
    MerchantOrder.objects.filter(pk=package.pk).update(refunded_at=timezone.now())
    return True


# --- unpaid orders ----------------------------------------------------------------------------


def orders_unpaid_expire(*, now=None) -> int:
    """Fails the orders still awaiting payment ``ORDER_PAYMENT_TIMEOUT_S`` after they were
    placed: their packages are cancelled, their stock given back and their lines put back
    into the cart, so an abandoned payment page does not hold units forever. Their open
    payments are marked cancelled. Returns how many orders it failed; idempotent (celery
    beat runs it every minute)."""
    from datetime import timedelta

    from django.conf import settings
    from payments import PaymentStatus

    cutoff = (now or timezone.now()) - timedelta(seconds=settings.ORDER_PAYMENT_TIMEOUT_S)
    ids = Order.objects.filter(status=Order.Status.PENDING, placed_at__lt=cutoff).values_list(
        "pk", flat=True
    )
    expired = 0
    for order_id in list(ids.order_by("pk")[:500]):
        with transaction.atomic():
            order, cart = _order_lock_with_cart(order_id=order_id)
            if order.status != Order.Status.PENDING:
                continue
            _order_fail(order, cart=cart, note="Not paid in time.", reason="Not paid in time.")
            # update(): no status signal, the order is settled already.
            Payment.objects.filter(
                order=order, status__in=[PaymentStatus.WAITING, PaymentStatus.INPUT]
            ).update(status=PaymentStatus.CANCELLED)
            expired += 1
    return expired
