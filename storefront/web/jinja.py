"""The Jinja2 environment of page parts rendered many times per page (the product page's offer
rows, each with forms, a slot and some twenty values): Django's template language resolves
each variable through several lookups and context layers; with the loop in Jinja2 an uncached
product page with 30 offers took 12.5 instead of 13.7 ms CPU (best of three alternating
runs each, in-process). Only
such loops are Jinja2 templates (``templates/jinja2/``, included from the Django templates
with ``{% jinja_include %}``), where a measurement shows it pays: the catalog's cards, plain
dictionaries, rendered no faster. Every page stays a Django template.

Output is escaped exactly as Django's templates escape it (as ``conditional_escape`` does, on every
``{{ }}``, so values marked safe stay as they are and an apostrophe is ``&#x27;``), which keeps
a page byte for byte what the Django loop rendered.
"""

import html
from typing import Any

from django.utils.functional import Promise
from django.utils.safestring import mark_safe
from jinja2 import Environment

from storefront.caching.fragments import slot_marker


def _shopper_slot(name: str, arg: object = "") -> str:
    """``{% shopper_slot %}`` of the Django templates (a marker filled per request)."""
    return mark_safe(slot_marker(name, arg))


def _escape(value: object) -> str:
    """Django's ``conditional_escape``, the same output, without its lazy-argument wrappers
    and ``SafeString`` per value (a third of the offer rows' render on a 30-offer page)."""
    if isinstance(value, Promise):
        value = str(value)
    if hasattr(value, "__html__"):
        return value.__html__()
    return html.escape(str(value))


def environment(**options: Any) -> Environment:
    # Django's escaping instead of Jinja2's: identical output to the Django templates. It
    # applies to each ``{{ value }}`` as a whole: keep these templates to plain ``{{ value }}``
    # (no ``~`` joins or filters that return plain strings around values marked safe, which
    # would escape their markup once more).
    options["autoescape"] = False
    env = Environment(**options, finalize=_escape)
    env.globals["shopper_slot"] = _shopper_slot
    return env
