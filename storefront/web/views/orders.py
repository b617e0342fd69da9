"""Orders for shoppers: payment, confirmation, "My orders", finding a guest order by its
number and e-mail address, and cancelling an order or a package not shipped yet (a confirm
page, then a POST). Another shopper's order is a 404."""

from datetime import timedelta

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods
from payments import RedirectNeeded

from storefront.errors import DomainError, NotFound
from storefront.models import MerchantOrder, Order, Refund
from storefront.money import format_money
from storefront.orders.selectors import order_get, order_list
from storefront.orders.services import (
    SHOPPER_CANCELLABLE,
    merchant_order_cancel_by_shopper,
    order_cancel,
)
from storefront.payments.ledger import cents, order_amount_due
from storefront.payments.services import order_payment_for
from storefront.security.form_limits import order_lookup_rate_limited
from storefront.web.checkout_forms import OrderLookupForm

ORDERS_SESSION_KEY = "orders_placed"
_SESSION_MAX_ORDERS = 20


def session_order_remember(request: HttpRequest, order: Order) -> None:
    """Lets this browser see a guest order it placed or looked up (by number and e-mail)."""
    numbers = [n for n in request.session.get(ORDERS_SESSION_KEY, []) if n != order.number]
    request.session[ORDERS_SESSION_KEY] = [order.number, *numbers][:_SESSION_MAX_ORDERS]


def _order_or_404(request: HttpRequest, number: str) -> Order:
    try:
        return order_get(
            number=number,
            user=request.user if request.user.is_authenticated else None,
            numbers=request.session.get(ORDERS_SESSION_KEY, []),
        )
    except NotFound as error:
        raise Http404(error.message) from error


_OPEN_ORDER = (Order.Status.PENDING, Order.Status.PAID)


def _cancellable(order: Order, package: MerchantOrder) -> bool:
    return order.status in _OPEN_ORDER and package.status in SHOPPER_CANCELLABLE


def _order_context(order: Order) -> dict:
    packages = list(order.merchant_orders.all())
    due = order_amount_due(order=order) if order.status == Order.Status.PENDING else order.total
    return {
        "order": order,
        "amount_due": due,
        # Packages cancelled before the money was taken: never charged.
        "amount_cancelled": order.total - (order.amount_captured or due),
        "cancellable_ids": {p.pk for p in packages if _cancellable(order, p)},
        "order_cancellable": order.status in _OPEN_ORDER
        and any(_cancellable(order, p) for p in packages)
        and all(
            _cancellable(order, p) or p.status == MerchantOrder.Status.CANCELLED for p in packages
        ),
        "refunds": list(
            order.refunds.select_related("merchant_order").order_by("created_at", "pk")
        ),
        "pay_by": order.placed_at + timedelta(seconds=settings.ORDER_PAYMENT_TIMEOUT_S),
    }


def order_detail(request: HttpRequest, number: str) -> HttpResponse:
    order = _order_or_404(request, number)
    return render(request, "web/orders/detail.html", _order_context(order))


def _refund_message(order: Order, refunds: list[Refund]) -> str:
    if not refunds:
        return ""
    amount = format_money(sum(r.amount for r in refunds), currency=order.currency)
    if all(r.status == Refund.Status.SUCCEEDED for r in refunds):
        return f" {amount} has been refunded to your payment method."
    return f" A refund of {amount} to your payment method is on its way."


@require_http_methods(["GET", "POST"])
def order_cancel_view(request: HttpRequest, number: str) -> HttpResponse:
    """Cancels the whole order, after a confirm page: unpaid, or paid with nothing shipped."""
    order = _order_or_404(request, number)
    if request.method == "GET":
        context = {**_order_context(order), "package": None}
        if not context["order_cancellable"]:
            messages.error(request, "This order can no longer be cancelled.")
            return redirect(order)
        return render(request, "web/orders/cancel.html", context)
    before = set(order.refunds.values_list("pk", flat=True))
    try:
        order_cancel(order=order, by=request.user)
    except DomainError as error:
        messages.error(request, error.message)
        return redirect(order)
    refunds = list(order.refunds.exclude(pk__in=before))
    messages.success(
        request,
        f"Order {order.number} is cancelled; its items are back in stock."
        + _refund_message(order, refunds),
    )
    return redirect(order)


@require_http_methods(["GET", "POST"])
def order_package_cancel(request: HttpRequest, number: str, package_id: int) -> HttpResponse:
    """Cancels one package not shipped yet, after a confirm page."""
    order = _order_or_404(request, number)
    package = next((p for p in order.merchant_orders.all() if p.pk == package_id), None)
    if package is None:
        raise Http404("No such package.")
    if request.method == "GET":
        if not _cancellable(order, package):
            messages.error(
                request, f"The package from {package.merchant_name} can no longer be cancelled."
            )
            return redirect(order)
        context = {**_order_context(order), "package": package}
        return render(request, "web/orders/cancel.html", context)
    try:
        merchant_order_cancel_by_shopper(order=order, merchant_order_id=package.pk, by=request.user)
    except DomainError as error:
        messages.error(request, error.message)
        return redirect(order)
    refunds = list(Refund.objects.filter(merchant_order_id=package.pk))
    messages.success(
        request,
        f"The package from {package.merchant_name} is cancelled; its items are back in stock."
        + _refund_message(order, refunds),
    )
    return redirect(order)


@require_http_methods(["GET", "POST"])
def order_pay(request: HttpRequest, number: str) -> HttpResponse:
    """The provider's payment form (the dummy provider: choose paid or rejected). The
    provider's answer comes back through django-payments' status signal."""
    order = _order_or_404(request, number)
    if order.status != Order.Status.PENDING:
        return redirect(order)
    payment = order_payment_for(order=order)
    try:
        form = payment.get_form(data=request.POST or None)
    except RedirectNeeded as to:
        return redirect(str(to))
    status = 400 if request.method == "POST" else 200
    # What the provider is asked for: less than the order's total once a package is cancelled.
    context = {"order": order, "form": form, "payment": payment, "amount": cents(payment.total)}
    return render(request, "web/orders/pay.html", context, status=status)


@login_required
def order_history(request: HttpRequest) -> HttpResponse:
    return render(request, "web/orders/list.html", {"orders": order_list(user=request.user)})


@require_http_methods(["GET", "POST"])
@order_lookup_rate_limited
def order_lookup(request: HttpRequest) -> HttpResponse:
    form = OrderLookupForm(request.POST or None)
    if request.method == "POST":
        if form.is_valid():
            try:
                order = order_get(**form.cleaned_data)
            except NotFound:
                form.add_error(None, "No order with this number and e-mail address.")
                return render(request, "web/orders/lookup.html", {"form": form}, status=404)
            session_order_remember(request, order)
            messages.success(request, f"Order {order.number} found.")
            return redirect(order)
        return render(request, "web/orders/lookup.html", {"form": form}, status=400)
    return render(request, "web/orders/lookup.html", {"form": form})
