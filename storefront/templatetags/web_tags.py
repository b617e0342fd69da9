"""Tags and filters of the shopper pages: ``{% load web_tags %}``."""

import decimal
from functools import lru_cache
from urllib.parse import quote

from django import template
from django.db.models import Sum
from django.template import engines
from django.template.defaulttags import CsrfTokenNode
from django.utils.safestring import mark_safe

from storefront.catalog.shipping import Discount, ShippingRule
from storefront.money import format_basis_points, format_money
from storefront.web.carts import request_cart_find

register = template.Library()


@register.simple_tag(takes_context=True)
def web_cart_units(context) -> int:
    """Units in the request's cart, for the header badge (0 without a cart)."""
    request = context.get("request")
    if request is None:
        return 0
    cart = request_cart_find(request)
    if cart is None:
        return 0
    return cart.lines.aggregate(units=Sum("quantity"))["units"] or 0


@register.filter
def shipping_terms(rule: ShippingRule | None) -> str:
    """``€4.99 shipping, +€1.00 per extra unit, free from €50.00`` in the shop currency."""
    if rule is None:
        return ""
    if rule.base_fee == 0 and rule.per_extra_unit == 0:
        return "Free shipping"
    if rule.base_fee == 0:
        parts = ["First unit ships free"]
    else:
        parts = [f"{format_money(rule.base_fee)} shipping"]
    if rule.per_extra_unit:
        parts.append(f"+{format_money(rule.per_extra_unit)} per extra unit")
    if rule.free_over is not None:
        parts.append(f"free from {format_money(rule.free_over)}")
    return ", ".join(parts)


@register.filter
def discount_terms(discount: Discount | None) -> str:
    """``5% off from 3 units`` (empty when the merchant gives no discount)."""
    if discount is None or discount.basis_points == 0:
        return ""
    unit_word = "unit" if discount.min_units == 1 else "units"
    return f"{format_basis_points(discount.basis_points)} off from {discount.min_units} {unit_word}"


@register.filter
def tile_hue(value: object) -> int:
    """A stable hue (0-359) for a product tile, so a category keeps its colour."""
    text = str(value)
    return sum((index + 1) * ord(char) for index, char in enumerate(text)) * 37 % 360


@register.filter
def initials(name: str) -> str:
    """``Voltra USB-C Cable, 1 m`` -> ``VU``: the product tile's monogram."""
    words = [word for word in str(name).replace(",", " ").split() if word[:1].isalnum()]
    return "".join(word[0] for word in words[:2]).upper()


@register.filter
def get_item(mapping: dict | None, key: object) -> object:
    """``mapping|get_item:key``: a dict lookup by a variable key (None when absent)."""
    if not mapping:
        return None
    return mapping.get(key)


@register.filter
def duration_ms(value: float | str | None) -> str:
    """``12.3`` -> ``12 ms``, ``2345`` -> ``2.3 s``, ``0.4`` -> ``under 1 ms``."""
    if value is None or value == "":
        return ""
    value = float(value)
    if value < 1:
        return "under 1 ms"
    if value < 1000:
        return f"{value:.0f} ms"
    return f"{value / 1000:.1f} s"


@register.filter
def big_count(value: int | str | None) -> str:
    """Counts of combinations: grouped digits up to a trillion, else ``about 3.4e29`` in words."""
    if value is None or value == "":
        return ""
    # ``decimal`` prints an int of any size (``str`` refuses past 4,300 digits).
    digits = value if isinstance(value, str) else str(decimal.Decimal(int(value)))
    if len(digits) <= 12:
        return f"{int(digits):,}"
    return f"about {digits[0]}.{digits[1]} × 10^{len(digits) - 1}"  # noqa: RUF001


# What ``quote`` makes of each ASCII character, for a lookup per character in C (``quote``
# works byte by byte in Python); non-ASCII text goes through ``quote`` itself.
_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~/")
_QUOTED = {chr(b): chr(b) if chr(b) in _SAFE else f"%{b:02X}" for b in range(128)}


@register.filter
def svg_data_uri(svg: str) -> str:
    """A product's SVG picture as a ``data:`` URI for an ``<img>`` (where SVG runs no
    scripts); empty when there is none."""
    if not svg:
        return ""
    return _svg_data_uri(svg)


# The same picture quotes the same way: a catalog page shows 24 of them, and quoting them
# was a tenth of its render. Keyed by the text itself, so an edited picture is a new entry.
@lru_cache(maxsize=4096)
def _svg_data_uri(svg: str) -> str:
    quoted = "".join(map(_QUOTED.__getitem__, svg)) if svg.isascii() else quote(svg)
    return "data:image/svg+xml;charset=utf-8," + quoted


@register.simple_tag(takes_context=True)
def jinja_include(context, template_name: str, **values) -> str:
    """Renders ``templates/jinja2/<template_name>`` with ``values`` and ``csrf_input`` (what
    ``{% csrf_token %}`` renders here: inside a shared fragment, its marker)."""
    template_ = engines["jinja2"].get_template(template_name)
    csrf_input = CsrfTokenNode().render(context)
    return mark_safe(template_.render({**values, "csrf_input": csrf_input}))
