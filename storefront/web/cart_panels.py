"""The cart page's extension point: panels other apps show on it, without storefront
importing them.

``settings.STOREFRONT_CART_PANELS`` lists providers by dotted path, loaded with
``import_string``. The cart page calls each one (in that order) for a cart that has lines::

    def provider(
        *, request: HttpRequest, cart: Cart, summary: CartPricingSummary, state: Mapping[str, Any]
    ) -> Iterable[CartPanel]: ...

``state`` is what a view of the provider's app passed to ``render_cart(panel_state=...)`` when
it re-renders the page after a refused form (smartcart's ``improve_error``, for example);
empty on a plain GET. A provider returns what to show, by slot:

- ``head``: inside ``<head>`` (a ``<noscript>`` refresh while something is pending);
- ``main``: above the merchant groups (notices, suggestions);
- ``side``: in the summary card, under the totals (calls to action).

Each ``CartPanel`` is either a template and its context (rendered with the request, on top
of the page's ``cart`` and ``summary``) or ready HTML: a ``SafeString`` is inserted as is, a
plain ``str`` is escaped. Providers only read; a write belongs behind the provider's own
view.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal, Protocol

from django.conf import settings
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.utils.html import conditional_escape
from django.utils.module_loading import import_string
from django.utils.safestring import SafeString

from storefront.carts.pricing_summary import CartPricingSummary
from storefront.models import Cart

Slot = Literal["head", "main", "side"]
SLOTS: tuple[Slot, ...] = ("head", "main", "side")


@dataclass(frozen=True)
class CartPanel:
    """One piece of the cart page: ``template_name`` with ``context``, or ``html``."""

    slot: Slot
    template_name: str = ""
    context: Mapping[str, Any] = field(default_factory=dict)
    html: str = ""


class CartPanelProvider(Protocol):
    def __call__(
        self,
        *,
        request: HttpRequest,
        cart: Cart,
        summary: CartPricingSummary,
        state: Mapping[str, Any],
    ) -> Iterable[CartPanel]: ...


@cache
def _providers(paths: tuple[str, ...]) -> tuple[CartPanelProvider, ...]:
    return tuple(import_string(path) for path in paths)


def cart_panel_providers() -> tuple[CartPanelProvider, ...]:
    """The configured providers (an empty setting, or none: no panels)."""
    return _providers(tuple(getattr(settings, "STOREFRONT_CART_PANELS", ())))


def _render(panel: CartPanel, *, request: HttpRequest, page: Mapping[str, Any]) -> SafeString:
    if panel.template_name:
        return SafeString(
            render_to_string(panel.template_name, {**page, **panel.context}, request=request)
        )
    return conditional_escape(panel.html)


def cart_panels_render(
    *,
    request: HttpRequest,
    cart: Cart,
    summary: CartPricingSummary,
    state: Mapping[str, Any] | None = None,
) -> dict[Slot, list[SafeString]]:
    """Every provider's panels rendered to HTML, by slot, in the providers' order."""
    rendered: dict[Slot, list[SafeString]] = {slot: [] for slot in SLOTS}
    page = {"cart": cart, "summary": summary}
    for provider in cart_panel_providers():
        panels = provider(request=request, cart=cart, summary=summary, state=state or {})
        for panel in panels:
            rendered[panel.slot].append(_render(panel, request=request, page=page))
    return rendered
