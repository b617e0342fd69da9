"""The one hook through which checkout asks for a cheaper assignment of the cart.

The storefront never imports the optimiser: ``STOREFRONT_CART_OPTIMIZER`` names a callable
(keyword-only ``cart``, ``budget_ms``) that returns ``None`` or a ``CartOptimization``; an
empty setting means no check.
"""

from collections.abc import Callable
from typing import Protocol

from django.conf import settings
from django.utils.module_loading import import_string

from storefront.models import Cart


class CartOptimization(Protocol):
    """A cheaper assignment found for the cart as it stands, appliable as a run of Improve
    cart (``run_id``, applied through the Improve cart apply path)."""

    run_id: int
    current_total: int
    suggested_total: int
    savings: int
    changed_lines: int


CartOptimizer = Callable[..., CartOptimization | None]


def cart_optimizer() -> CartOptimizer | None:
    path = getattr(settings, "STOREFRONT_CART_OPTIMIZER", "")
    return import_string(path) if path else None


def cart_cheaper_find(*, cart: Cart) -> CartOptimization | None:
    """A strictly cheaper assignment within ``CHECKOUT_OPTIMIZE_BUDGET_MS``, or ``None``."""
    optimizer = cart_optimizer()
    if optimizer is None:
        return None
    found = optimizer(cart=cart, budget_ms=settings.CHECKOUT_OPTIMIZE_BUDGET_MS)
    if found is None or found.savings <= 0:
        return None
    return found
