"""Writes for improve-cart: create a run, execute it (in the request or on a worker), apply
or dismiss its suggestion, and fail runs that a lost worker left behind.

Errors are ``storefront.errors`` domain errors, mapped to HTTP by the API's one handler:
``ValidationFailed`` (400), ``NotFound`` (404), ``Conflict`` (409, with a stable ``code``),
``Throttled`` (429, with ``retry_after``), and smartcart's ``ServiceUnavailable`` (503, with
``retry_after``: the broker is down and the cart too large to solve in the request, decided by
``routing.route_choose`` before anything is written).
"""

from smartcart.services.apply import (
    Applied,
    optimization_run_apply,
    optimization_run_apply_outcome,
    optimization_run_dismiss,
)
from smartcart.services.common import (
    MAX_BUDGET_MS,
    optimization_run_enqueue,
    optimization_run_fail,
)
from smartcart.services.create import optimization_run_create, optimization_run_solve_now
from smartcart.services.execute import optimization_run_execute
from smartcart.services.lease import optimization_run_deadline, optimization_run_lease_check
from smartcart.services.reaper import optimization_run_poll_check, optimization_runs_reap

__all__ = [
    "MAX_BUDGET_MS",
    "Applied",
    "optimization_run_apply",
    "optimization_run_apply_outcome",
    "optimization_run_create",
    "optimization_run_deadline",
    "optimization_run_dismiss",
    "optimization_run_enqueue",
    "optimization_run_execute",
    "optimization_run_fail",
    "optimization_run_lease_check",
    "optimization_run_poll_check",
    "optimization_run_solve_now",
    "optimization_runs_reap",
]
