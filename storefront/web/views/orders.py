"""Orders for shoppers: payment, confirmation, "My orders", and finding a guest order by
its number and e-mail address. Another shopper's order is a 404."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods
from payments import RedirectNeeded

from storefront.errors import NotFound
from storefront.models import Order
from storefront.orders.selectors import order_get, order_list
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


def order_detail(request: HttpRequest, number: str) -> HttpResponse:
    order = _order_or_404(request, number)
    return render(request, "web/orders/detail.html", {"order": order})


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
    context = {"order": order, "form": form, "payment": payment}
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
