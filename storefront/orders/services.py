"""The merchant side of orders: a package accepted, shipped, delivered or cancelled (its
stock given back, and its cost refunded when the order was paid), by whom and when."""

from django.db import transaction

from storefront.checkout.stock import stock_release
from storefront.enqueue import task_enqueue_on_commit
from storefront.errors import Conflict, NotFound, ValidationFailed
from storefront.models import MerchantOrder, Order
from storefront.orders.status import order_status_set, package_status_set

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
    package_status_set(package, target, by=user, note=tracking or why)
    package.tracking_reference = tracking or package.tracking_reference
    package.cancel_reason = why or package.cancel_reason
    package.save(update_fields=["status", "tracking_reference", "cancel_reason", "updated_at"])
    if action == "cancel":
        stock_release(packages=[package])
        if order.status == Order.Status.PAID:
            task_enqueue_on_commit("storefront.merchant_order_refund", args=[package.pk])
        if not order.merchant_orders.exclude(status=MerchantOrder.Status.CANCELLED).exists():
            order_status_set(order, Order.Status.CANCELLED, by=user, note=why)
    return package
