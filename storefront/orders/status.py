"""Status changes of orders and their packages, recorded as ``OrderEvent`` rows, and the
failing of a pending order (its packages cancelled, the stock given back, the lines put back
into the shopper's cart), shared by the payment callback and the expiry of unpaid orders.

A failing order locks the cart its lines go back to before the order, as a sign-in's cart
merge does before moving orders to the account's cart.
"""

from django.db.models import F
from django.utils import timezone

from storefront.checkout.stock import stock_release
from storefront.models import Cart, CartLine, MerchantOrder, Order, OrderEvent, OrderLine


def order_lock_with_cart(*, order_id: int) -> tuple[Order, Cart | None]:
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


def order_fail(order: Order, *, cart: Cart | None, note: str, reason: str) -> None:
    """Fails a pending order, locked with ``cart`` (``order_lock_with_cart``): its packages
    are cancelled, their stock given back and its lines put back into that cart, so the
    shopper can try again."""
    order_status_set(order, Order.Status.FAILED, note=note)
    packages_cancel(order, reason=reason, by=None)
    if cart is not None:
        cart_restore(cart=cart, order=order)


def cart_restore(*, cart: Cart, order: Order) -> int:
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


def order_status_set(order: Order, status: str, *, note: str = "", by=None) -> None:
    OrderEvent.objects.create(
        order=order, from_status=order.status, to_status=status, note=note, by=by
    )
    order.status = status
    order.save(update_fields=["status", "updated_at"])


def packages_cancel(order: Order, *, reason: str, by) -> None:
    packages = list(
        MerchantOrder.objects.select_for_update()
        .filter(order=order)
        .exclude(status=MerchantOrder.Status.CANCELLED)
        .order_by("pk")
    )
    for package in packages:
        package_status_set(package, MerchantOrder.Status.CANCELLED, by=by, note=reason)
    MerchantOrder.objects.filter(pk__in=[package.pk for package in packages]).update(
        status=MerchantOrder.Status.CANCELLED, cancel_reason=reason, updated_at=timezone.now()
    )
    stock_release(packages=packages)


def package_status_set(package: MerchantOrder, status: str, *, by, note: str = "") -> None:
    OrderEvent.objects.create(
        order_id=package.order_id,
        merchant_order=package,
        from_status=package.status,
        to_status=status,
        note=note,
        by=by,
    )
    package.status = status
