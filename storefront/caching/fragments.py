"""Shared fragments: the parts of a page that are the same for every shopper, rendered once
and kept in the shared cache under versioned keys (``storefront.caching.versions``).

A fragment is rendered with *markers* where a shopper's own bits go, and the markers are
filled on every request, hit or miss alike (one code path):

- the CSRF token: ``{% csrf_token %}`` inside a fragment renders a placeholder, replaced by
  this request's token;
- ``{% shopper_slot "name" arg %}``: a comment marker replaced by ``SLOT_FILLERS[name]`` called
  with the page's live context (e.g. the "In your cart" badge of one offer row).

Views describe a fragment with a ``FragmentSpec`` (which versions it depends on and what else
makes it differ, e.g. the query string); templates wrap the shared markup in
``{% shared_fragment spec %}...{% endshared_fragment %}`` (``{% load fragments %}``). A spec of
``None`` renders without the cache (e.g. a page showing a failed form). So does the cache being
off (``PAGE_CACHE=0``) or down: every failure falls back to rendering.

A visitor with nothing of their own (no session, no token) gets the whole page instead:
``render_shared_page`` hands it to ``storefront.caching.middleware``, which serves it to the
next such visitor in one cache round trip, before the session and auth middlewares run.
"""

import hashlib
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from storefront.caching.middleware import CSRF_MARKER, shared_lookup, shared_response_offer
from storefront.caching.versions import (
    SHARED,
    cache_versions_get,
    page_cache_enabled,
    page_cache_ttl,
    product_version_name,
)
from storefront.catalog.selectors import product_get
from storefront.errors import NotFound
from storefront.models import Product

logger = logging.getLogger(__name__)

T = TypeVar("T")

_SLOT = re.compile(r"<!--slot:([a-z_]+):([^>]*?)-->")
_MISSING = object()


@dataclass(frozen=True)
class FragmentSpec:
    """``name``: what the fragment is; ``versions``: the cache_versions names it shows;
    ``vary``: everything else its markup depends on (strings)."""

    name: str
    versions: tuple[str, ...]
    vary: tuple[str, ...] = field(default=())


def _key(kind: str, spec: FragmentSpec, tokens: dict[str, str]) -> str:
    digest = hashlib.sha1(
        "\x1f".join([*(tokens[n] for n in spec.versions), *spec.vary]).encode(),
        usedforsecurity=False,
    ).hexdigest()
    return f"{kind}:{spec.name}:{digest}"


def _cache_get(key: str) -> Any:
    try:
        return cache.get(key, _MISSING)
    except Exception:
        logger.warning("page cache: read failed, rendering", exc_info=True)
        return _MISSING


def _cache_set(key: str, value: Any) -> None:
    try:
        cache.set(key, value, timeout=page_cache_ttl())
    except Exception:
        logger.warning("page cache: write failed", exc_info=True)


def _versions(spec: FragmentSpec, request: HttpRequest | None) -> dict[str, str] | None:
    """The spec's version tokens, read once per request (a request sees one state)."""
    memo = getattr(request, "_page_cache_versions", None) if request is not None else None
    if memo is None:
        memo = {}
        if request is not None:
            request._page_cache_versions = memo  # type: ignore[attr-defined]
    missing = [name for name in spec.versions if name not in memo]
    if missing:
        tokens = cache_versions_get(missing)
        if tokens is None:
            return None
        memo.update(tokens)
    return memo


def cached_value(
    spec: FragmentSpec | None,
    compute: Callable[[], T],
    *,
    kind: str = "pv",
    request: HttpRequest | None = None,
) -> T:
    """``compute()``'s result, shared through the cache under ``spec`` (picklable values only);
    computed directly when the cache is off, down or ``spec`` is ``None``."""
    if spec is None or not page_cache_enabled():
        return compute()
    tokens = _versions(spec, request)
    if tokens is None:
        return compute()
    key = _key(kind, spec, tokens)
    value = _cache_get(key)
    if value is _MISSING:
        value = compute()
        _cache_set(key, value)
    return value


class _SlugMoved(Exception):
    pass


def product_cached_get(*, slug: str, request: HttpRequest | None = None):
    """``product_get(slug=...)`` through the cache: the slug's product id is remembered, the
    product (with its best offer) is kept under its own and the shared version."""
    if not page_cache_enabled():
        return product_get(slug=slug)
    slug_key = f"pslug:{slug}"
    product_id = _cache_get(slug_key)
    if product_id is _MISSING:
        product_id = Product.objects.filter(slug=slug).values_list("pk", flat=True).first()
        if product_id is None:
            return product_get(slug=slug)  # NotFound
        _cache_set(slug_key, product_id)

    def compute():
        product = product_get(slug=slug)
        if product.pk != product_id:
            raise _SlugMoved
        return product

    spec = FragmentSpec("product", (SHARED, product_version_name(product_id)), (slug,))
    try:
        return cached_value(spec, compute, request=request)
    except (_SlugMoved, NotFound):
        # The slug now names another product, or none: forget it and read the database.
        try:
            cache.delete(slug_key)
        except Exception:
            logger.warning("page cache: delete failed", exc_info=True)
        return product_get(slug=slug)


# --- per-shopper fill ------------------------------------------------------------------------

SlotFiller = Callable[[Any, str], str]
SLOT_FILLERS: dict[str, SlotFiller] = {}


def slot_filler(name: str) -> Callable[[SlotFiller], SlotFiller]:
    def register(function: SlotFiller) -> SlotFiller:
        SLOT_FILLERS[name] = function
        return function

    return register


def slot_marker(name: str, arg: object = "") -> str:
    return f"<!--slot:{name}:{arg}-->"


def fragment_fill(html: str, context) -> str:
    """The shared markup with this request's CSRF token and shopper slots filled in."""
    request = context.get("request")
    if CSRF_MARKER in html:
        html = html.replace(CSRF_MARKER, get_token(request) if request is not None else "")
    if "<!--slot:" in html:
        html = _SLOT.sub(lambda m: SLOT_FILLERS[m.group(1)](context, m.group(2)), html)
    return html


def fragment_render(spec: FragmentSpec | None, render: Callable[[], str], context) -> str:
    """The fragment's markup (from the cache when it can), filled for this request; left
    unfilled inside a whole shared page (``render_shared_page`` fills the page once)."""
    html = cached_value(spec, render, kind="pf", request=context.get("request"))
    if context.get(WHOLE_PAGE):
        return html
    return fragment_fill(html, context)


# --- whole pages for visitors with nothing of their own ---------------------------------------

WHOLE_PAGE = "shared_whole_page"


def render_shared_page(
    request: HttpRequest,
    template_name: str,
    context: dict | Callable[[], dict],
    spec: FragmentSpec | None,
) -> HttpResponse:
    """``render(...)``, but for a shared request (``storefront.caching.middleware``: a visitor
    with nothing of their own, e.g. a first visit, a crawler, a load test) the whole page is
    the shared one: rendered with the CSRF marker and empty shopper slots, and handed to the
    page-cache middleware, which stores it under the page's URL and ``spec``'s versions and
    serves it to the next such visitor before the session and auth middlewares run. Anyone
    else gets the page rendered around its shared fragments.

    The whole page is keyed by its URL: for a shared request everything else ``spec.vary``
    names must follow from the URL (a shared visitor has no cart, so no postal code)."""
    if (
        spec is None
        or not page_cache_enabled()
        or shared_lookup(request) is None
        or request.user.is_authenticated
    ):
        return render(request, template_name, context() if callable(context) else context)
    if _versions(spec, request) is None:  # the cache is down: render for this visitor
        return render(request, template_name, context() if callable(context) else context)
    values = context() if callable(context) else context
    shared = {**values, WHOLE_PAGE: True, "csrf_token": CSRF_MARKER}
    # Nothing of the visitor's own: the slots stay empty, only the CSRF token is theirs.
    html = _SLOT.sub("", render_to_string(template_name, shared, request=request))
    shared_response_offer(request, names=spec.versions, body=html.encode())
    return HttpResponse(fragment_fill(html, {"request": request}))


# --- the product page's slots ------------------------------------------------------------


@slot_filler("in_cart")
def _in_cart_pill(context, offer_id: str) -> str:
    line = context.get("cart_line")
    if line is None or str(line.offer_id) != offer_id:
        return ""
    return mark_safe('<span class="pill pill--info">In your cart</span>')


@slot_filler("cart_note")
def _cart_note(context, _arg: str) -> str:
    line = context.get("cart_line")
    if line is None:
        return ""
    return format_html(
        '<p class="in-cart-note">In your cart: {} from {}. <a href="{}">View cart</a></p>',
        line.quantity,
        line.offer.merchant.name,
        reverse("cart"),
    )
