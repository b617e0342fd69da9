"""The shopper's side of the price watch: the notice on the cart page and the marker on the
header's cart badge (a context processor, evaluated only when a page shows them), the
e-mail opt-in, and the unsubscribe page that works without signing in."""

from collections.abc import Mapping
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.functional import cached_property
from django.views.decorators.http import require_http_methods, require_POST

from smartcart.pricewatch.notify import (
    price_watch_email_enabled,
    price_watch_email_set,
    price_watch_unsubscribe,
)
from smartcart.pricewatch.selectors import PriceWatchNotice, price_watch_notice_for_cart
from storefront.carts.pricing_summary import CartPricingSummary
from storefront.models import Cart
from storefront.web.cart_panels import CartPanel
from storefront.web.carts import request_cart_find


class PriceWatchContext:
    """``price_watch`` in templates: each attribute is read once, and only when used."""

    def __init__(self, request: HttpRequest) -> None:
        self._request = request

    @cached_property
    def notice(self) -> PriceWatchNotice | None:
        return price_watch_notice_for_cart(cart=request_cart_find(self._request))

    @cached_property
    def email_enabled(self) -> bool:
        return price_watch_email_enabled(user=getattr(self._request, "user", None))


def price_watch(request: HttpRequest) -> dict:
    """Context processor: ``price_watch.notice`` (the request's cart's notice) and
    ``price_watch.email_enabled``."""
    return {"price_watch": PriceWatchContext(request)}


@require_POST
def price_watch_email(request: HttpRequest) -> HttpResponse:
    """Turns the signed-in shopper's price-watch e-mail on (``enabled=1``) or off."""
    if not request.user.is_authenticated:
        return redirect("login")
    enabled = request.POST.get("enabled") == "1"
    price_watch_email_set(
        user=request.user, enabled=enabled, site_url=request.build_absolute_uri("/")
    )
    messages.success(
        request,
        "We will e-mail you when your cart can cost less (at most once a day)."
        if enabled
        else "Price alerts by e-mail are off.",
    )
    return redirect("cart")


@require_http_methods(["GET", "POST"])
def price_watch_unsubscribe_view(request: HttpRequest, token: str) -> HttpResponse:
    """GET asks (mail scanners follow links), POST turns the e-mail off; no login needed."""
    if request.method == "GET":
        return render(request, "smartcart/price_watch_unsubscribe.html", {"done": False})
    if not price_watch_unsubscribe(token=token):
        return render(
            request, "smartcart/price_watch_unsubscribe.html", {"invalid": True}, status=400
        )
    return render(request, "smartcart/price_watch_unsubscribe.html", {"done": True})


def price_watch_cart_panels(
    *,
    request: HttpRequest,
    cart: Cart,
    summary: CartPricingSummary,
    state: Mapping[str, Any],
) -> list[CartPanel]:
    """The price-watch notice (and the e-mail opt-in) above the Improve panel, through
    storefront's cart-panel hook (``settings.STOREFRONT_CART_PANELS``)."""
    context = {"price_watch": PriceWatchContext(request)}
    return [
        CartPanel(slot="main", template_name="smartcart/_price_watch_notice.html", context=context)
    ]
