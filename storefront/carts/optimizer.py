"""The extension point for "find a cheaper assignment for this cart", without storefront
importing the app that does it.

``settings.STOREFRONT_CART_OPTIMIZER`` names a callable by dotted path (smartcart configures
``"smartcart.optimizer.cart_cheaper_assignment"``); it must satisfy ``CartOptimizer``::

    def optimizer(*, cart: Cart, budget_ms: int) -> CheaperAssignment | None: ...

It answers within about ``budget_ms`` (reading the cart and solving), with ``None`` when the
cart cannot be bought for less as it stands (or cannot be optimised: empty, a line out of
stock). Storefront code (checkout's "switch and save", for one) calls
``cart_cheaper_assignment_find``, which answers ``None`` when no optimizer is configured.
Applying the answer goes through the optimizer's own flow with ``run_id`` (smartcart's
``/api/v1/cart/optimizations/<run_id>/apply/`` or ``cart_improve_apply`` page).
"""

from dataclasses import dataclass
from typing import Protocol

from django.conf import settings
from django.utils.module_loading import import_string

from storefront.models import Cart


@dataclass(frozen=True)
class CheaperAssignment:
    """A cheaper way to buy the cart as it stands: totals in cents, ``run_id`` to apply it."""

    run_id: int
    current_total: int
    cheaper_total: int

    @property
    def savings(self) -> int:
        return self.current_total - self.cheaper_total


class CartOptimizer(Protocol):
    def __call__(self, *, cart: Cart, budget_ms: int) -> CheaperAssignment | None: ...


def cart_optimizer_get() -> CartOptimizer | None:
    """The configured optimizer, or ``None`` when the setting is empty or absent."""
    path = getattr(settings, "STOREFRONT_CART_OPTIMIZER", "")
    if not path:
        return None
    optimizer: CartOptimizer = import_string(path)
    return optimizer


def cart_cheaper_assignment_find(*, cart: Cart, budget_ms: int) -> CheaperAssignment | None:
    """A cheaper assignment for ``cart`` from the configured optimizer; ``None`` when there
    is none, or no optimizer is configured."""
    optimizer = cart_optimizer_get()
    if optimizer is None:
        return None
    return optimizer(cart=cart, budget_ms=budget_ms)
