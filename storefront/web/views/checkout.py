"""Checkout for the web: address, review (with a last look for a cheaper cart), place.

The address is kept in the session between the steps; the review's total is sealed in a
signed token that placing the order checks (``storefront.orders.review``).
"""

import uuid
from dataclasses import asdict

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from storefront.cart_optimizer import cart_cheaper_assignment_find
from storefront.errors import DomainError, Throttled, ValidationFailed
from storefront.orders.ratelimit import order_place_ident, order_place_rate_check
from storefront.orders.review import CheckoutChanged, ReviewCartMerged, review_token_make
from storefront.orders.services import ShippingAddress, order_place, shipping_address_validate
from storefront.selectors import cart_pricing_summary
from storefront.services import cart_destination_set
from storefront.web.carts import request_cart_find
from storefront.web.checkout_forms import CheckoutAddressForm, PlaceOrderForm
from storefront.web.views.common import cart_url
from storefront.web.views.orders import session_order_remember

ADDRESS_SESSION_KEY = "checkout_address"


def _cart_or_back(request: HttpRequest):
    cart = request_cart_find(request)
    if cart is None or not cart.lines.exists():
        messages.info(request, "Your cart is empty: add something before checking out.")
        return None
    return cart


def checkout_address(request: HttpRequest) -> HttpResponse:
    cart = _cart_or_back(request)
    if cart is None:
        return redirect(cart_url())
    if request.method != "POST":
        initial = request.session.get(ADDRESS_SESSION_KEY) or {
            "email": getattr(request.user, "email", ""),
            "postal_code": cart.postal_code,
            "country": "DE",
        }
        return _render_address(request, CheckoutAddressForm(initial=initial))
    form = CheckoutAddressForm(request.POST)
    if not form.is_valid():
        return _render_address(request, form, status=400)
    try:
        address = shipping_address_validate(**form.cleaned_data)
        if address.postal_code != cart.postal_code:
            cart_destination_set(cart=cart, postal_code=address.postal_code)
            messages.info(request, f"Shipping is now priced for {address.postal_code}.")
    except DomainError as error:
        form.add_domain_error(error)
        return _render_address(request, form, status=error.http_status)
    request.session[ADDRESS_SESSION_KEY] = asdict(address)
    return redirect("checkout_review")


def _render_address(request, form, *, status: int = 200) -> HttpResponse:
    return render(request, "web/checkout/address.html", {"form": form}, status=status)


def _session_address(request: HttpRequest) -> ShippingAddress | None:
    data = request.session.get(ADDRESS_SESSION_KEY)
    try:
        return shipping_address_validate(**data) if isinstance(data, dict) else None
    except (ValidationFailed, TypeError):
        return None


def render_review(
    request: HttpRequest, *, cart, address, status: int = 200, changed=None, error: str = ""
) -> HttpResponse:
    summary = cart_pricing_summary(cart=cart)
    cheaper = None
    if not summary.unavailable and not changed:
        cheaper = cart_cheaper_assignment_find(
            cart=cart, budget_ms=settings.CHECKOUT_OPTIMIZE_BUDGET_MS
        )
    form = PlaceOrderForm(
        initial={"review_token": review_token_make(summary), "idempotency_key": uuid.uuid4().hex}
    )
    context = {
        "summary": summary,
        "address": address,
        "cheaper": cheaper,
        "form": form,
        "changed": changed,
        "error": error,
    }
    return render(request, "web/checkout/review.html", context, status=status)


def checkout_review(request: HttpRequest) -> HttpResponse:
    cart = _cart_or_back(request)
    if cart is None:
        return redirect(cart_url())
    address = _session_address(request)
    if address is None:
        return redirect("checkout")
    return render_review(request, cart=cart, address=address)


@require_POST
def checkout_place(request: HttpRequest) -> HttpResponse:
    cart = request_cart_find(request)
    address = _session_address(request)
    if cart is None or address is None:
        messages.info(request, "Start checkout from your cart.")
        return redirect(cart_url())
    form = PlaceOrderForm(request.POST)
    if not form.is_valid():
        return render_review(
            request, cart=cart, address=address, status=400, error="Review your order again."
        )
    try:
        order_place_rate_check(ident=order_place_ident(request))
        order = order_place(
            cart=cart,
            user=request.user,
            address=address,
            review_token=form.cleaned_data["review_token"],
            idempotency_key=form.cleaned_data["idempotency_key"],
        )
    except Throttled as throttled:
        response = render_review(
            request, cart=cart, address=address, status=429, error=throttled.message
        )
        response["Retry-After"] = str(throttled.retry_after)
        return response
    except ReviewCartMerged as merged:
        return _review_again(request, cart=cart, address=address, message=merged.message)
    except CheckoutChanged as changed:
        return render_review(request, cart=cart, address=address, status=409, changed=changed)
    except DomainError as error:
        return render_review(
            request, cart=cart, address=address, status=error.http_status, error=error.message
        )
    session_order_remember(request, order)
    return redirect(reverse("order_pay", args=[order.number]))


def _review_again(request: HttpRequest, *, cart, address: ShippingAddress, message: str):
    """Back to a fresh review of ``cart`` (the account's cart after a sign-in merge), priced
    for the checkout's address: the merge keeps the account cart's destination."""
    messages.warning(request, message)
    if address.postal_code != cart.postal_code:
        try:
            cart_destination_set(cart=cart, postal_code=address.postal_code)
        except DomainError:
            return redirect("checkout")  # the address step says what is wrong
    return redirect("checkout_review")
