"""Checkout for the web: address, review (with a last look for a cheaper cart), place.

The address is kept in the session between the steps; the review's total is sealed in a
signed token that placing the order checks (``storefront.checkout.review``). Placing answers
the payment page (or the order page of the order that idempotency key already placed), or
sends back to a fresh review with a message saying why nothing was ordered: a line sold
out or repriced since the review, the cart changed in another tab, a sign-in merged it, a
review page without its place button. Only the order limit answers in place (429).
"""

import uuid
from dataclasses import asdict

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from storefront.carts.pricing_summary import CartPricingSummary, cart_pricing_summary
from storefront.carts.services import cart_destination_set
from storefront.checkout.address import ShippingAddress, shipping_address_validate
from storefront.checkout.addresses import (
    address_as_initial,
    address_get,
    address_list,
    address_remember,
)
from storefront.checkout.ratelimit import order_place_ident
from storefront.checkout.services import checkout_review_prepare, order_place
from storefront.checkout.terms import PAYMENT_TIMING, checkout_package_terms
from storefront.errors import DomainError, Throttled, ValidationFailed
from storefront.models import Order
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
        initial, chosen = _address_initial(request, cart)
        form = CheckoutAddressForm(initial=initial)
        return _render_address(request, cart, form, chosen=chosen)
    form = CheckoutAddressForm(request.POST)
    if not form.is_valid():
        return _render_address(request, cart, form, status=400)
    try:
        address = shipping_address_validate(**form.cleaned_data)
        if address.postal_code != cart.postal_code:
            cart_destination_set(cart=cart, postal_code=address.postal_code)
            messages.info(request, f"Shipping is now priced for {address.postal_code}.")
    except DomainError as error:
        form.add_domain_error(error)
        return _render_address(request, cart, form, status=error.http_status)
    address_remember(user=request.user, address=address)
    request.session[ADDRESS_SESSION_KEY] = asdict(address)
    return redirect("checkout_review")


def _address_initial(request: HttpRequest, cart) -> tuple[dict, int | None]:
    """What fills the form, and which saved address that is: the one asked for
    (``?address=<id>``), a blank one (``?address=new``), the address of this checkout,
    else the one used last, else the account's e-mail and the cart's postal code."""
    blank = {
        "email": getattr(request.user, "email", ""),
        "postal_code": cart.postal_code,
        "country": "DE",
    }
    asked = request.GET.get("address")
    if asked == "new":
        return blank, None
    saved = address_get(user=request.user, address_id=asked)
    if saved is None and request.session.get(ADDRESS_SESSION_KEY):
        return request.session[ADDRESS_SESSION_KEY], None
    saved = saved or address_list(user=request.user).first()
    if saved is None:
        return blank, None
    return address_as_initial(saved), saved.pk


def summary_context(summary: CartPricingSummary) -> dict:
    """The order summary both steps show: each package with who sells it and its terms."""
    packages = [
        (group, checkout_package_terms(merchant_name=group.merchant_name))
        for group in summary.groups
    ]
    return {"summary": summary, "packages": packages, "payment_timing": PAYMENT_TIMING}


def _render_address(
    request, cart, form, *, status: int = 200, chosen: int | None = None
) -> HttpResponse:
    context = {
        "form": form,
        "saved_addresses": address_list(user=request.user),
        "chosen_address_id": chosen,
        **summary_context(cart_pricing_summary(cart=cart)),
    }
    return render(request, "web/checkout/address.html", context, status=status)


def _session_address(request: HttpRequest) -> ShippingAddress | None:
    data = request.session.get(ADDRESS_SESSION_KEY)
    try:
        return shipping_address_validate(**data) if isinstance(data, dict) else None
    except (ValidationFailed, TypeError):
        return None


def render_review(
    request: HttpRequest, *, cart, address, status: int = 200, error: str = ""
) -> HttpResponse:
    review = checkout_review_prepare(cart=cart)
    form = PlaceOrderForm(
        initial={"review_token": review.review_token, "idempotency_key": uuid.uuid4().hex}
    )
    context = {
        **summary_context(review.summary),
        "address": address,
        "cheaper": review.cheaper,
        "form": form,
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
        # A review with a line that cannot be bought has no place button to post from.
        return _review_again(
            request,
            cart=cart,
            address=address,
            message="Nothing was ordered: check your order below and place it from this page.",
        )
    try:
        order = order_place(
            cart=cart,
            user=request.user,
            address=address,
            review_token=form.cleaned_data["review_token"],
            idempotency_key=form.cleaned_data["idempotency_key"],
            rate_limit_ident=order_place_ident(request),
        )
    except Throttled as throttled:
        response = render_review(
            request, cart=cart, address=address, status=429, error=throttled.message
        )
        response["Retry-After"] = str(throttled.retry_after)
        return response
    except DomainError as error:
        # What changed since the review (CheckoutChanged names each line and the new
        # total), a sign-in's merge, an old review, a cart emptied by another tab.
        return _review_again(
            request, cart=cart, address=address, message=f"Nothing was ordered. {error.message}"
        )
    session_order_remember(request, order)
    if order.status != Order.Status.PENDING:  # that key placed it, and it is settled since
        return redirect(order)
    return redirect(reverse("order_pay", args=[order.number]))


def _review_again(request: HttpRequest, *, cart, address: ShippingAddress, message: str):
    """Back to a fresh review of ``cart`` (the account's cart after a sign-in merge), priced
    for the checkout's address: the merge keeps the account cart's destination. The review
    sends on to the cart page when nothing is left to review."""
    messages.warning(request, message)
    if address.postal_code != cart.postal_code:
        try:
            cart_destination_set(cart=cart, postal_code=address.postal_code)
        except DomainError:
            return redirect("checkout")  # the address step says what is wrong
    return redirect("checkout_review")
