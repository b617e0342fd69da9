"""Checkout's last look for a cheaper cart (``STOREFRONT_CART_OPTIMIZER`` points here).

It reuses Improve cart: the latest finished run of this cart version when there is one,
else a new run on a short budget through the same planner and service path. The answer is
an ordinary run, so the review applies it exactly as Improve cart does; nothing here changes
the cart.
"""

from dataclasses import dataclass

from smartcart.models import OptimizationRun
from smartcart.selectors import optimization_run_latest
from smartcart.services import optimization_run_create
from storefront.errors import DomainError
from storefront.models import Cart


@dataclass(frozen=True)
class CheckoutSuggestion:
    run_id: int
    current_total: int
    suggested_total: int
    savings: int
    changed_lines: int


def _suggestion(run: OptimizationRun | None) -> CheckoutSuggestion | None:
    if run is None or not run.is_improvement or run.is_stale or run.applied_at is not None:
        return None
    lines = (run.suggestion or {}).get("lines", [])
    return CheckoutSuggestion(
        run_id=run.pk,
        current_total=run.current_total,
        suggested_total=run.suggested_total,
        savings=run.savings,
        changed_lines=sum(1 for line in lines if line.get("changed")),
    )


def checkout_cart_optimize(*, cart: Cart, budget_ms: int) -> CheckoutSuggestion | None:
    """A finished, strictly cheaper run for the cart as it stands, or ``None`` (none found
    within ``budget_ms``, the cart cannot be optimised now, or the shopper said no to it)."""
    latest = optimization_run_latest(cart=cart, include_dismissed=True)
    finished = (OptimizationRun.Status.DONE, OptimizationRun.Status.FAILED)
    if latest is not None and latest.cart_version == cart.version and latest.status in finished:
        return None if latest.dismissed_at else _suggestion(latest)
    try:
        run = optimization_run_create(cart=cart, budget_ms=budget_ms)
    except DomainError:  # rate limited, a line unavailable: checkout goes on without it
        return None
    return _suggestion(run) if run.status == OptimizationRun.Status.DONE else None
