"""The cart page and its forms: add, change quantity, remove, destination.

Every form posts here and redirects back (post/redirect/get). A refused change re-renders
the page it came from with the error next to the field at fault and the matching status
(400 bad input, 404 not yours or unknown, 409 refused by the current state).
"""

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from storefront.carts.delivered import (
    LineAlternative,
    cart_unavailable_alternatives,
    product_cheapest_delivered_offer,
)
from storefront.carts.pricing_summary import cart_pricing_summary
from storefront.carts.services import (
    cart_destination_set,
    cart_line_add,
    cart_line_remove,
    cart_line_set_offer,
    cart_line_set_quantity,
)
from storefront.catalog.selectors import offer_get, product_get
from storefront.errors import DomainError, NotFound
from storefront.models import Offer
from storefront.money import format_money
from storefront.web.cart_panels import cart_panels_render
from storefront.web.carts import request_cart_find, request_cart_get_or_create
from storefront.web.forms import AddToCartForm, DestinationForm, LineQuantityForm
from storefront.web.views.catalog import render_product
from storefront.web.views.common import cart_url, render_problem, safe_next

if TYPE_CHECKING:
    from storefront.catalog.selectors import ProductWithBestOffer


def cart_detail(request: HttpRequest) -> HttpResponse:
    return render_cart(request)


def render_cart(
    request: HttpRequest,
    *,
    status: int = 200,
    destination_form: DestinationForm | None = None,
    line_errors: dict[int, list[str]] | None = None,
    line_values: dict[int, str] | None = None,
    switch_errors: dict[int, str] | None = None,
    panel_state: Mapping[str, Any] | None = None,
) -> HttpResponse:
    """The cart page; after a refused form, the arguments carry what to show where
    (``panel_state``: for the cart panels' providers, see ``storefront.web.cart_panels``)."""
    cart = request_cart_find(request)
    summary = cart_pricing_summary(cart=cart) if cart is not None else None
    panels = None
    if cart is not None and summary is not None and not summary.is_empty:
        panels = cart_panels_render(request=request, cart=cart, summary=summary, state=panel_state)
    if destination_form is None:
        destination_form = DestinationForm(
            initial={"postal_code": cart.postal_code if cart else ""}
        )
    alternatives = cart_unavailable_alternatives(summary=summary) if summary is not None else {}
    context = {
        "cart": cart,
        "summary": summary,
        # Another seller for each line that cannot be bought as it stands.
        "alternatives": {
            line_id: _alternative_view(alternative) for line_id, alternative in alternatives.items()
        },
        "destination_form": destination_form,
        "line_errors": line_errors or {},
        "line_values": line_values or {},
        # A refused "Buy from another seller": said next to that line's button.
        "switch_errors": switch_errors or {},
        "panels": panels,
    }
    return render(request, "web/cart.html", context, status=status)


def _alternative_view(alternative: LineAlternative) -> dict:
    return {
        "offer_id": alternative.offer.pk,
        "merchant_name": alternative.offer.merchant.name,
        "price": format_money(alternative.offer.unit_price),
        "total_change": format_money(alternative.cost.increment),
        "others": alternative.sellers - 1,
    }


def _add_target(data: dict) -> "tuple[ProductWithBestOffer | None, Offer | None]":
    """The product (and offer, when one was chosen) a posted add-to-cart names."""
    try:
        if data.get("offer"):
            offer = offer_get(offer_id=data["offer"])
            # Re-read with the catalog annotations the product page shows on a refusal.
            return product_get(product_id=offer.product_id), offer
        if data.get("product"):
            return product_get(product_id=data["product"]), None
    except NotFound as error:
        raise Http404(error.message) from error
    return None, None


@require_POST
def cart_add(request: HttpRequest) -> HttpResponse:
    form = AddToCartForm(request.POST)
    form.is_valid()
    product, offer = _add_target(form.cleaned_data)
    if product is None:
        return render_problem(
            request,
            title="Nothing to add",
            message="Choose a product or one of its offers to add to your cart.",
            status=400,
        )
    target = str(offer.pk) if offer is not None else "cheapest"
    if form.errors:
        return render_product(
            request, product=product, add_form=form, add_target=target, status=400
        )
    quantity = form.cleaned_data["quantity"]
    if offer is None:
        # Cheapest delivered: what adds least to this cart's total for its postal code.
        cart = request_cart_find(request)
        offer = product_cheapest_delivered_offer(
            product=product,
            cart=cart,
            postal_code=cart.postal_code if cart else "",
            quantity=quantity,
        )
        if offer is None:
            form.add_error("quantity", f"No merchant has {quantity} of this product in stock now.")
            return render_product(
                request, product=product, add_form=form, add_target=target, status=409
            )
    cart = request_cart_get_or_create(request)
    try:
        line = cart_line_add(cart=cart, offer=offer, quantity=quantity)
    except DomainError as error:
        form.add_domain_error(error)
        return render_product(
            request, product=product, add_form=form, add_target=target, status=error.http_status
        )
    messages.success(
        request,
        f"Added {product.name} from {offer.merchant.name} to your cart "
        f"({line.quantity} in your cart now).",
        extra_tags="added",
    )
    fallback = reverse("product", args=[product.slug])
    return redirect(safe_next(request, form.cleaned_data.get("next"), fallback=fallback))


def _cart_or_404(request: HttpRequest):
    cart = request_cart_find(request)
    if cart is None:
        raise Http404("You have no cart yet.")
    return cart


@require_POST
def cart_line_update(request: HttpRequest, line_id: int) -> HttpResponse:
    cart = _cart_or_404(request)
    form = LineQuantityForm(request.POST)
    if form.is_valid():
        try:
            cart_line_set_quantity(
                cart=cart, line_id=line_id, quantity=form.cleaned_data["quantity"]
            )
        except NotFound as error:
            raise Http404(error.message) from error
        except DomainError as error:
            form.add_domain_error(error)
            status = error.http_status
        else:
            messages.success(request, "Quantity updated.")
            return redirect(cart_url(f"line-{line_id}"))
    else:
        status = 400
    if not cart.lines.filter(pk=line_id).exists():
        raise Http404("This line is not in your cart.")
    errors = [str(message) for field_errors in form.errors.values() for message in field_errors]
    return render_cart(
        request,
        status=status,
        line_errors={line_id: errors},
        line_values={line_id: request.POST.get("quantity", "")},
    )


@require_POST
def cart_line_delete(request: HttpRequest, line_id: int) -> HttpResponse:
    cart = _cart_or_404(request)
    line = cart.lines.select_related("product").filter(pk=line_id).first()
    if line is None:
        raise Http404("This line is not in your cart.")
    cart_line_remove(cart=cart, line_id=line_id)
    messages.success(request, f"Removed {line.product.name} from your cart.")
    return redirect(cart_url())


@require_POST
def cart_destination(request: HttpRequest) -> HttpResponse:
    form = DestinationForm(request.POST)
    if form.is_valid():
        cart = request_cart_get_or_create(request)
        try:
            cart = cart_destination_set(cart=cart, postal_code=form.cleaned_data["postal_code"])
        except DomainError as error:
            form.add_domain_error(error)
            return render_cart(request, status=error.http_status, destination_form=form)
        if cart.postal_code:
            messages.success(request, f"Shipping now calculated for {cart.postal_code}.")
        else:
            messages.success(request, "Destination cleared: merchants' standard shipping applies.")
        return redirect(safe_next(request, form.cleaned_data.get("next"), fallback=cart_url()))
    return render_cart(request, status=400, destination_form=form)


@require_POST
def cart_line_switch(request: HttpRequest, line_id: int) -> HttpResponse:
    """Moves a line to another offer of its product (the sold-out line's "Buy from ..."
    button names the other seller that adds least to the cart delivered), keeping its
    quantity; the service re-checks the offer's product, state and stock under the cart's
    lock, so a button left on screen while that seller sold out too is refused, not obeyed."""
    cart = _cart_or_404(request)
    posted = request.POST.get("offer", "")
    try:
        if not (posted.isascii() and posted.isdigit()):
            raise NotFound("No such offer.", code="offer_not_found", field="offer")
        offer = offer_get(offer_id=int(posted))
        line = cart_line_set_offer(cart=cart, line_id=line_id, offer=offer)
    except NotFound as error:
        if error.code == "cart_line_not_found":
            raise Http404(error.message) from error
        status, message = 404, "That seller's offer is gone. Compare sellers on the product page."
    except DomainError as error:
        status, message = error.http_status, error.message
    else:
        messages.success(
            request,
            f"Now buying {line.quantity} from {offer.merchant.name} "
            f"at {format_money(offer.unit_price)} each.",
        )
        return redirect(cart_url(f"line-{line_id}"))
    return render_cart(request, status=status, switch_errors={line_id: message})
