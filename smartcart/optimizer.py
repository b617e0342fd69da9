"""smartcart's answer to storefront's cart optimizer hook
(``settings.STOREFRONT_CART_OPTIMIZER``, see ``storefront.carts.optimizer``)."""

import time
from dataclasses import dataclass

from django.conf import settings

from smartcart.models import OptimizationRun
from smartcart.moves import suggestion_line_moves
from smartcart.selectors import (
    cart_current_breakdown,
    cart_problem_build,
    optimization_run_for_checkout,
)
from smartcart.services import optimization_run_solve_now
from storefront.carts.optimizer import CartOptimizer, CheaperAssignment
from storefront.errors import DomainError
from storefront.models import Cart

# The cart's state, not the caller's mistake: nothing to offer.
CART_NOT_OPTIMISABLE = frozenset({"cart_empty", "line_unavailable"})


@dataclass(frozen=True)
class SwitchAssignment(CheaperAssignment):
    """A cheaper assignment that also says what switching changes: one sentence per moved
    line ("Voltra Widget: Dear Shop to Bundle Shop (€2.00 cheaper, saves €6.99 shipping)")."""

    moves: tuple[str, ...] = ()


def cart_cheaper_assignment(*, cart: Cart, budget_ms: int) -> CheaperAssignment | None:
    """A cheaper assignment of ``cart`` found by the planner within ``budget_ms``, stored as
    a finished run to apply by its id; ``None`` when the cart is already the cheapest, the
    solver failed, the cart cannot be optimised as it stands (empty, a line out of stock),
    or the shopper dismissed a suggestion for this version of the cart.

    A done run of the same cart version, younger than ``SMARTCART_CHECKOUT_REUSE_S`` and
    priced at what the cart costs now, is answered again instead of solving (a reload of the
    review page, Improve cart clicked just before checkout)."""
    dismissed, run = optimization_run_for_checkout(
        cart=cart, max_age_s=settings.SMARTCART_CHECKOUT_REUSE_S
    )
    if dismissed:
        return None
    try:
        t0 = time.perf_counter()
        build = cart_problem_build(cart=cart)
        build_ms = (time.perf_counter() - t0) * 1000.0
        # A price or shipping term moved since the run: its totals no longer hold, and the
        # problem just built (what the cart costs now) is the one to solve.
        current = sum(cost.cost for cost in cart_current_breakdown(build=build))
        if run is None or run.current_total != current:
            run = optimization_run_solve_now(
                cart=cart,
                budget_ms=budget_ms,
                build=build,
                build_ms=build_ms,
                source=OptimizationRun.Source.CHECKOUT,
            )
    except DomainError as error:
        if error.code in CART_NOT_OPTIMISABLE:
            return None
        raise  # a bad budget is the caller's mistake, not the cart's state
    if not run.is_improvement or run.current_total is None or run.suggested_total is None:
        return None
    return SwitchAssignment(
        run_id=run.pk,
        current_total=run.current_total,
        cheaper_total=run.suggested_total,
        moves=tuple(move.summary for move in suggestion_line_moves(run.suggestion).values()),
    )


_checked: CartOptimizer = cart_cheaper_assignment  # mypy: the callable fits the Protocol
