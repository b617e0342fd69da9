"""Reads of orders. Someone else's order is ``NotFound``, never "forbidden"."""

from collections.abc import Iterable

from django.db.models import Prefetch, QuerySet

from storefront.errors import NotFound
from storefront.models import MerchantOrder, Order, OrderLine


def _with_packages(orders: QuerySet[Order]) -> QuerySet[Order]:
    packages = MerchantOrder.objects.order_by("pk").prefetch_related(
        Prefetch("lines", queryset=OrderLine.objects.order_by("pk"))
    )
    return orders.prefetch_related(Prefetch("merchant_orders", queryset=packages))


def order_list(*, user) -> QuerySet[Order]:
    """The signed-in shopper's orders, newest first, with their packages and lines."""
    if user is None or not user.is_authenticated:
        return Order.objects.none()
    return _with_packages(Order.objects.filter(owner=user))


def order_get(
    *, number: str, user=None, email: str | None = None, numbers: Iterable[str] = ()
) -> Order:
    """The order ``number`` if the caller may see it: its owner, a guest who gives the
    order's e-mail address, or the session that placed it (``numbers``)."""
    try:
        order = _with_packages(Order.objects.all()).get(number=str(number).upper())
    except Order.DoesNotExist:
        raise NotFound("No such order.", code="order_not_found", field="number") from None
    if order.owner_id is not None and user is not None and order.owner_id == user.pk:
        return order
    if order.owner_id is None and order.number in set(numbers):
        return order
    if email and order.email.casefold() == str(email).strip().casefold():
        return order
    raise NotFound("No such order.", code="order_not_found", field="number")


def merchant_order_list(*, user) -> QuerySet[MerchantOrder]:
    """The packages a user may see: their merchant's for merchant staff, all for admins."""
    packages = MerchantOrder.objects.select_related("order", "merchant")
    staff = getattr(user, "merchant_staff", None)
    if staff is not None:
        return packages.filter(merchant_id=staff.merchant_id)
    if user.is_active and user.is_staff and user.has_perm("storefront.view_merchantorder"):
        return packages
    return packages.none()
