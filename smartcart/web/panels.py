"""Improve cart on the cart page, through storefront's cart-panel hook
(``settings.STOREFRONT_CART_PANELS``, see ``storefront.web.cart_panels``)."""

from collections.abc import Mapping
from typing import Any

from django.http import HttpRequest

from smartcart.web.improve import improve_panel_for_cart
from storefront.carts.pricing_summary import CartPricingSummary
from storefront.models import Cart
from storefront.web.cart_panels import CartPanel


def improve_cart_panels(
    *,
    request: HttpRequest,
    cart: Cart,
    summary: CartPricingSummary,
    state: Mapping[str, Any],
) -> list[CartPanel]:
    """The latest run's panel above the merchants (its region is there with no run too: the
    page's script polls inside it), the Improve button in the summary, and a refresh without
    JavaScript while a run is pending. ``state``: ``improve_error`` (shown under the button)
    and ``improve_conflict`` with ``improve_conflict_run`` (the run whose Apply was refused,
    shown in the panel with the reason), from ``smartcart.web.views``."""
    improve = improve_panel_for_cart(
        cart=cart,
        conflict=state.get("improve_conflict", ""),
        conflict_run=state.get("improve_conflict_run"),
    )
    context = {"improve": improve, "improve_error": state.get("improve_error", "")}
    return [
        CartPanel(slot="head", template_name="smartcart/_improve_head.html", context=context),
        CartPanel(slot="main", template_name="smartcart/_improve_region.html", context=context),
        CartPanel(slot="side", template_name="smartcart/_improve_form.html", context=context),
    ]
