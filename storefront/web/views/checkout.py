"""Checkout for the web: one page with the address, the order summary and the place button.

``/checkout/`` shows the address form (saved addresses for a signed-in shopper), the order
priced now with each merchant's terms, a last look for a cheaper cart, and the place button;
its one POST checks the address and places the order. The total the page showed is sealed in
a signed review token (``storefront.checkout.review``) that placing checks, so a price, stock
or shipping change since the page was drawn shows the page again with a notice saying what
changed, never a different charge. A new postal code prices shipping again and shows the page
with the new total first, for the same reason.

Pages from the three-step checkout keep working: ``/checkout/review/`` draws the same page, an
address-only POST to ``/checkout/`` keeps the address and sends to it, and
``/checkout/place/`` places from the address kept in the session.
"""

import uuid
from dataclasses import asdict
from urllib.parse import urlsplit

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import Resolver404, resolve, reverse
from django.views.decorators.http import require_GET, require_POST

from storefront.carts.pricing_summary import CartPricingSummary
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
from storefront.validators import postal_code_normalize
from storefront.web.carts import request_cart_find
from storefront.web.checkout_forms import CheckoutAddressForm, PlaceOrderForm
from storefront.web.views.common import cart_url, render_problem, safe_next
from storefront.web.views.orders import session_order_remember

ADDRESS_SESSION_KEY = "checkout_address"
# The address form as typed (not checked) when the page's switch or keep button was pressed.
TYPED_SESSION_KEY = "checkout_typed"
# The cheaper cart's answers the page's buttons post to (``storefront.carts.optimizer``: the
# optimizer's own flow), by URL name: the post is sent on there, nowhere else.
CHEAPER_ACTIONS = frozenset({"cart_improve_apply", "cart_improve_dismiss"})


def _cart_or_back(request: HttpRequest):
    cart = request_cart_find(request)
    if cart is None or not cart.lines.exists():
        messages.info(request, "Your cart is empty: add something before checking out.")
        return None
    return cart


def checkout_address(request: HttpRequest) -> HttpResponse:
    """The one-page checkout (``checkout``): GET draws it, POST checks the address and
    places the order."""
    if request.method != "POST":
        return _checkout_page_get(request)
    if "cheaper_action" in request.POST:
        return _cheaper_action(request)
    cart = request_cart_find(request)
    placing = "review_token" in request.POST
    if cart is None or (not placing and not cart.lines.exists()):
        messages.info(request, "Your cart is empty: add something before checking out.")
        return redirect(cart_url())
    form = CheckoutAddressForm(request.POST)
    if not form.is_valid():
        if not cart.lines.exists():  # emptied by another tab: nothing left to show
            return redirect(cart_url())
        return render_checkout(request, cart=cart, form=form, status=400)
    try:
        address = shipping_address_validate(**form.cleaned_data)
        was = _destination_follow(cart, address)
    except DomainError as error:
        form.add_domain_error(error)
        return render_checkout(request, cart=cart, form=form, status=error.http_status)
    address_remember(user=request.user, address=address)
    request.session[ADDRESS_SESSION_KEY] = asdict(address)
    if not placing:
        # An address-only post (a page of the old address step): keep it, show the page.
        if was is not None:
            messages.info(request, f"Shipping is now priced for {address.postal_code}.")
        return redirect("checkout_review")
    if was is not None:
        # Shipping was priced for another place: show the new total before anything is
        # ordered, rather than refusing the token the shopper could not have known was stale.
        notice = _repriced(address, was)
        return render_checkout(request, cart=cart, form=form, notice=notice, notice_total=True)
    return _place(request, cart=cart, address=address, form=form)


def _cheaper_action(request: HttpRequest) -> HttpResponse:
    """ "Switch and save" or "Keep my cart" pressed on the page: both are buttons of the page's
    one form, so what was typed comes with them. It is kept for the page to come back with,
    and the post goes on unchanged (307) to the optimizer's apply or dismiss URL the button
    names, which sends the shopper back here (``next``)."""
    target = request.POST.get("cheaper_action", "")
    if safe_next(request, target, fallback="") != target or not target.startswith("/"):
        target = ""
    try:
        view_name = resolve(urlsplit(target).path).view_name if target else ""
    except Resolver404:
        view_name = ""
    if view_name not in CHEAPER_ACTIONS:
        return render_problem(
            request,
            title="Nothing was changed",
            message="This button does not belong to the checkout page. Go back to it.",
            status=400,
            back_url=reverse("checkout"),
        )
    request.session[TYPED_SESSION_KEY] = {
        name: request.POST.get(name, "") for name in CheckoutAddressForm.base_fields
    }
    return redirect(target, preserve_request=True)


@require_GET
def checkout_review(request: HttpRequest) -> HttpResponse:
    """The old review step's address: the same one page, so old links and tabs work."""
    return _checkout_page_get(request)


@require_POST
def checkout_place(request: HttpRequest) -> HttpResponse:
    """Places from the address kept in the session: a review page drawn before the one-page
    checkout, or a client that posts only the token. Refusals go back to the page."""
    cart = request_cart_find(request)
    address = _session_address(request)
    if cart is None or address is None:
        messages.info(request, "Start checkout from your cart.")
        return redirect(cart_url())
    return _place(request, cart=cart, address=address, form=None)


def _checkout_page_get(request: HttpRequest) -> HttpResponse:
    cart = _cart_or_back(request)
    if cart is None:
        return redirect(cart_url())
    initial, chosen = _address_initial(request, cart)
    form = CheckoutAddressForm(initial=initial)
    return render_checkout(request, cart=cart, form=form, chosen=chosen)


def _destination_follow(cart, address: ShippingAddress) -> str | None:
    """Prices the cart for the address's postal code; the code it was priced for before, or
    ``None`` when nothing changed."""
    if address.postal_code == cart.postal_code:
        return None
    was = cart.postal_code
    cart_destination_set(cart=cart, postal_code=address.postal_code)
    return was


def _repriced(address: ShippingAddress, was: str) -> str:
    where = f"for {was}" if was else "for no particular place"
    return (
        f"Nothing was ordered yet: shipping was priced {where}, and is now priced for "
        f"{address.postal_code}. Check your order, then place it."
    )


def _address_initial(request: HttpRequest, cart) -> tuple[dict, int | None]:
    """What fills the form, and which saved address that is: what was typed before a switch
    (``_cheaper_action``), the one asked for (``?address=<id>``), a blank one
    (``?address=new``), the address of this checkout, else the one used last, else the
    account's e-mail and the cart's postal code."""
    blank = {
        "email": getattr(request.user, "email", ""),
        "postal_code": cart.postal_code,
        "country": "DE",
    }
    typed = request.session.pop(TYPED_SESSION_KEY, None)
    if isinstance(typed, dict):  # coming back from "Switch and save": as it was typed
        return typed, None
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
    """The order summary: each package with who sells it and its terms."""
    packages = [
        (group, checkout_package_terms(merchant_name=group.merchant_name))
        for group in summary.groups
    ]
    return {"summary": summary, "packages": packages, "payment_timing": PAYMENT_TIMING}


def _postal_pending(form: CheckoutAddressForm, summary: CartPricingSummary) -> str:
    """The form's postal code when shipping is priced for another one ("" otherwise): the
    page says placing prices it first."""
    value = form["postal_code"].value()
    code = postal_code_normalize(value) if isinstance(value, str) else ""
    return code if code and code != summary.postal_code else ""


def render_checkout(
    request: HttpRequest,
    *,
    cart,
    form: CheckoutAddressForm,
    status: int = 200,
    notice: str = "",
    notice_total: bool = False,
    chosen: int | None = None,
) -> HttpResponse:
    """The one page, priced now, with a fresh review token and idempotency key; ``notice``
    (focused) says why it is shown again, ``notice_total`` adds the total it shows now."""
    review = checkout_review_prepare(cart=cart)
    place_form = PlaceOrderForm(
        initial={"review_token": review.review_token, "idempotency_key": uuid.uuid4().hex}
    )
    # A switch comes back to the address this page was drawn at (never the place URL).
    here = request.path if request.method == "GET" else reverse("checkout")
    context = {
        **summary_context(review.summary),
        "form": form,
        "place_form": place_form,
        "cheaper": review.cheaper,
        "notice": notice,
        "notice_total": notice_total,
        "here": here,
        "postal_pending": _postal_pending(form, review.summary),
        "saved_addresses": address_list(user=request.user),
        "chosen_address_id": chosen,
    }
    return render(request, "web/checkout/checkout.html", context, status=status)


def _session_address(request: HttpRequest) -> ShippingAddress | None:
    data = request.session.get(ADDRESS_SESSION_KEY)
    try:
        return shipping_address_validate(**data) if isinstance(data, dict) else None
    except (ValidationFailed, TypeError):
        return None


def _place(
    request: HttpRequest, *, cart, address: ShippingAddress, form: CheckoutAddressForm | None
) -> HttpResponse:
    """Places the order the page showed. ``form`` is the one page's address form: refusals
    draw the page again in place with it; without it (the old place URL) they send back
    to the page with a message."""
    place_form = PlaceOrderForm(request.POST)
    if not place_form.is_valid():
        # A page with a line that cannot be bought has no place button to post from.
        message = "Nothing was ordered: check your order below and place it from this page."
        return _refused(request, cart=cart, address=address, form=form, message=message)
    try:
        order = order_place(
            cart=cart,
            user=request.user,
            address=address,
            review_token=place_form.cleaned_data["review_token"],
            idempotency_key=place_form.cleaned_data["idempotency_key"],
            rate_limit_ident=order_place_ident(request),
        )
    except Throttled as throttled:
        page_form = form or CheckoutAddressForm(initial=asdict(address))
        response = render_checkout(
            request, cart=cart, form=page_form, status=429, notice=throttled.message
        )
        response["Retry-After"] = str(throttled.retry_after)
        return response
    except DomainError as error:
        # What changed since the page was drawn (CheckoutChanged names each line and the
        # new total), a sign-in's merge, an old page, a cart emptied by another tab.
        message = f"Nothing was ordered. {error.message}"
        return _refused(request, cart=cart, address=address, form=form, message=message)
    session_order_remember(request, order)
    if order.status != Order.Status.PENDING:  # that key placed it, and it is settled since
        return redirect(order)
    return redirect(reverse("order_pay", args=[order.number]))


def _refused(
    request: HttpRequest,
    *,
    cart,
    address: ShippingAddress,
    form: CheckoutAddressForm | None,
    message: str,
) -> HttpResponse:
    """The page again for ``cart`` (the account's cart after a sign-in merge), priced for
    the checkout's address (a merge keeps the account cart's destination): in place with
    ``message`` focused for the one page's post, else by redirect with a message. An empty
    cart sends on to the cart page."""
    if address.postal_code != cart.postal_code:
        try:
            cart_destination_set(cart=cart, postal_code=address.postal_code)
        except DomainError:
            messages.warning(request, message)
            return redirect("checkout")  # the address form says what is wrong
    if form is None:
        messages.warning(request, message)
        return redirect("checkout_review")
    if not cart.lines.exists():
        messages.warning(request, message)
        return redirect(cart_url())
    return render_checkout(request, cart=cart, form=form, status=409, notice=message)
