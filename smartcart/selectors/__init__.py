"""Reads for improve-cart: the engine problem of a cart and its current total
(``problems``), optimisation runs (``runs``) and a run's saving at today's prices
(``live``)."""

from smartcart.selectors.live import RunLive, optimization_run_live
from smartcart.selectors.problems import (
    CartLines,
    CartProblemBuild,
    LineSnapshot,
    OfferSnapshot,
    cart_current_breakdown,
    cart_current_total,
    cart_lines_find,
    cart_lines_read,
    cart_problem_build,
    problem_size,
)
from smartcart.selectors.runs import (
    optimization_run_for_cart_panel,
    optimization_run_for_checkout,
    optimization_run_get,
    optimization_run_in_flight,
    optimization_run_latest,
    optimization_run_list,
    optimization_run_stale_q,
)

__all__ = [
    "CartLines",
    "CartProblemBuild",
    "LineSnapshot",
    "OfferSnapshot",
    "RunLive",
    "cart_current_breakdown",
    "cart_current_total",
    "cart_lines_find",
    "cart_lines_read",
    "cart_problem_build",
    "optimization_run_for_cart_panel",
    "optimization_run_for_checkout",
    "optimization_run_get",
    "optimization_run_in_flight",
    "optimization_run_latest",
    "optimization_run_list",
    "optimization_run_live",
    "optimization_run_stale_q",
    "problem_size",
]
