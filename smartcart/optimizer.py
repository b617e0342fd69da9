"""smartcart's answer to storefront's cart optimizer hook
(``settings.STOREFRONT_CART_OPTIMIZER``, see ``storefront.cart_optimizer``)."""

from smartcart.services import optimization_run_solve_now
from storefront.cart_optimizer import CartOptimizer, CheaperAssignment
from storefront.errors import DomainError
from storefront.models import Cart

# The cart's state, not the caller's mistake: nothing to offer.
CART_NOT_OPTIMISABLE = frozenset({"cart_empty", "line_unavailable"})


def cart_cheaper_assignment(*, cart: Cart, budget_ms: int) -> CheaperAssignment | None:
    """A cheaper assignment of ``cart`` found by the planner within ``budget_ms``, stored as
    a finished run to apply by its id; ``None`` when the cart is already the cheapest, the
    solver failed, or the cart cannot be optimised as it stands (empty, a line out of stock)."""
    try:
        run = optimization_run_solve_now(cart=cart, budget_ms=budget_ms)
    except DomainError as error:
        if error.code in CART_NOT_OPTIMISABLE:
            return None
        raise  # a bad budget is the caller's mistake, not the cart's state
    if not run.is_improvement or run.current_total is None or run.suggested_total is None:
        return None
    return CheaperAssignment(
        run_id=run.pk, current_total=run.current_total, cheaper_total=run.suggested_total
    )


_checked: CartOptimizer = cart_cheaper_assignment  # mypy: the callable fits the Protocol
