"""Packages moving on: the merchant side (accepted, shipped, delivered or cancelled) and the
shopper's cancellation of an order or of a package not shipped yet. A cancelled package's
stock goes back, and its money is settled through the payment ledger: a lower amount due
before payment, a refund after it."""

from django.db import transaction

from storefront.checkout.stock import stock_release
from storefront.enqueue import task_enqueue_on_commit
from storefront.errors import Conflict, NotFound, ValidationFailed
from storefront.models import MerchantOrder, Order
from storefront.orders.status import order_status_set, package_status_set
from storefront.payments.ledger import order_money_settle

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
    if action == "ship" and package.status == MerchantOrder.Status.PLACED:
        raise Conflict(
            "Accept this package first: a package is shipped once it is accepted.",
            code="accept_first",
            field="action",
        )
    if package.status not in allowed:
        raise Conflict(
            f"A package that is {package.get_status_display().lower()} cannot be "
            f"{target.label.lower()}.",
            code="status_invalid",
            field="action",
        )
    if action in ("accept", "ship") and order.status != Order.Status.PAID:
        raise Conflict("The order is not paid yet.", code="order_not_paid", field="action")
    if action == "cancel":
        _package_cancel(order=order, package=package, by=user, reason=why)
        return package
    package_status_set(package, target, by=user, note=tracking)
    package.tracking_reference = tracking or package.tracking_reference
    package.save(update_fields=["status", "tracking_reference", "updated_at"])
    if action == "ship":
        task_enqueue_on_commit("storefront.package_shipped_mail_send", args=[package.pk])
    return package


# Not handed to the carrier yet: the shopper may still cancel.
SHOPPER_CANCELLABLE = (MerchantOrder.Status.PLACED, MerchantOrder.Status.ACCEPTED)
SHOPPER_REASON = "Cancelled by the shopper."


def _actor(by):
    return by if by is not None and getattr(by, "is_authenticated", False) else None


def _package_cancel(*, order: Order, package: MerchantOrder, by, reason: str) -> None:
    """Cancels a package of the locked ``order`` (the package locked too): its stock back,
    its money settled (the open payment lowered, or a refund), the order cancelled with
    its last package."""
    package_status_set(package, MerchantOrder.Status.CANCELLED, by=by, note=reason)
    package.cancel_reason = reason
    package.save(update_fields=["status", "cancel_reason", "updated_at"])
    stock_release(packages=[package])
    order_money_settle(order=order, package=package)
    live = order.merchant_orders.exclude(status=MerchantOrder.Status.CANCELLED)
    if order.status in (Order.Status.PENDING, Order.Status.PAID) and not live.exists():
        order_status_set(order, Order.Status.CANCELLED, by=by, note=reason)


def _cancellable_order(order: Order) -> Order:
    order = Order.objects.select_for_update().get(pk=order.pk)
    if order.status not in (Order.Status.PENDING, Order.Status.PAID):
        raise Conflict(
            f"This order is {order.get_status_display().lower()}: nothing to cancel.",
            code="order_not_cancellable",
        )
    return order


def _shipped_conflict(package: MerchantOrder) -> Conflict:
    return Conflict(
        f"The package from {package.merchant_name} is {package.get_status_display().lower()}: "
        "it can no longer be cancelled.",
        code="package_shipped",
    )


@transaction.atomic
def order_cancel(*, order: Order, by=None, reason: str = SHOPPER_REASON) -> Order:
    """The shopper cancels a whole order: unpaid, or paid with no package shipped yet. Every
    package's stock goes back and, where paid, what was captured is refunded through the
    ledger (one refund per package). The caller has checked that ``by`` (a user, or
    ``None`` for a guest) may see the order. ``Conflict`` when the order is settled
    already (``order_not_cancellable``) or a package has shipped (``package_shipped``)."""
    order = _cancellable_order(order)
    packages = list(
        MerchantOrder.objects.select_for_update()
        .filter(order=order)
        .exclude(status=MerchantOrder.Status.CANCELLED)
        .order_by("pk")
    )
    for package in packages:
        if package.status not in SHOPPER_CANCELLABLE:
            raise _shipped_conflict(package)
    actor = _actor(by)
    for package in packages:
        _package_cancel(order=order, package=package, by=actor, reason=reason)
    if order.status != Order.Status.CANCELLED:
        order_status_set(order, Order.Status.CANCELLED, by=actor, note=reason)
    return order


@transaction.atomic
def merchant_order_cancel_by_shopper(
    *, order: Order, merchant_order_id: int, by=None, reason: str = SHOPPER_REASON
) -> MerchantOrder:
    """The shopper cancels one package of ``order`` not shipped yet: its stock goes back,
    what is due drops (before payment) or its cost is refunded (after). ``NotFound`` for a
    package of another order; ``Conflict`` when it is shipped (``package_shipped``),
    cancelled already (``package_cancelled``) or the order is settled."""
    order = _cancellable_order(order)
    package = (
        MerchantOrder.objects.select_for_update().filter(order=order, pk=merchant_order_id).first()
    )
    if package is None:
        raise NotFound("No such package.", code="package_not_found", field="package")
    if package.status == MerchantOrder.Status.CANCELLED:
        raise Conflict("This package is cancelled already.", code="package_cancelled")
    if package.status not in SHOPPER_CANCELLABLE:
        raise _shipped_conflict(package)
    _package_cancel(order=order, package=package, by=_actor(by), reason=reason)
    return package
