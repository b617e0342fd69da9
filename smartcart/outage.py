"""Improve cart while the broker (Redis) is down: small carts are solved in the request,
larger ones are refused with a 503 before anything is written.

``broker_available()`` asks the broker with short timeouts, at most once a second per process
(the answer is remembered), so an outage costs a shopper a quarter of a second at most once
in a while, never the client library's reconnect loop.

Settings: ``SMARTCART_OUTAGE_INLINE_MAX_MS`` (default 200): while the broker is down, a cart
whose best exact CPU method is predicted within this is solved in the request; anything
larger answers ``ServiceUnavailable`` (503, ``Retry-After``: ``SMARTCART_OUTAGE_RETRY_S``).
"""

import logging
import threading
import time

from django.conf import settings

from gpu_engine import CartProblem
from gpu_engine.planning.planner import GpuState, make_plan
from smartcart.errors import ServiceUnavailable
from smartcart.models import OptimizationRun
from smartcart.routing import RouteChoice, rate_profile

logger = logging.getLogger(__name__)

CHECK_TTL_S = 1.0
BROKER_TIMEOUT_S = 0.25
_lock = threading.Lock()
_checked: dict[str, tuple[float, bool]] = {}


def broker_available() -> bool:
    """Whether the broker accepts a connection now (True with in-process tasks)."""
    from storefront.celery import app

    if app.conf.task_always_eager:
        return True
    url = str(app.conf.broker_url)
    now = time.monotonic()
    with _lock:
        cached = _checked.get(url)
        if cached is not None and now - cached[0] < CHECK_TTL_S:
            return cached[1]
        up = _ping(app)
        _checked[url] = (time.monotonic(), up)
        return up


def broker_check_forget() -> None:
    """Drops the remembered answer (tests; a process that must ask the broker now)."""
    with _lock:
        _checked.clear()


def _ping(app) -> bool:
    try:
        with app.connection_for_write(
            connect_timeout=BROKER_TIMEOUT_S,
            transport_options={
                "max_retries": 0,
                "socket_connect_timeout": BROKER_TIMEOUT_S,
                "socket_timeout": BROKER_TIMEOUT_S,
            },
        ) as connection:
            connection.ensure_connection(max_retries=1)
            connection.default_channel  # noqa: B018  (Redis: opening a channel pings)
            return True
    except Exception as error:
        logger.warning("Broker unavailable: %s", error)
        return False


def outage_route_choose(*, problem: CartProblem, budget_ms: int | None) -> RouteChoice:
    """The route while the broker is down: inline for a cart predicted to solve exactly
    within ``SMARTCART_OUTAGE_INLINE_MAX_MS`` on the CPU, else ``ServiceUnavailable``."""
    budget = budget_ms or settings.SMARTCART_DEFAULT_BUDGET_MS
    plan = make_plan(problem, budget_ms=budget, profile=rate_profile(), gpu=GpuState(present=False))
    estimate = next((e for e in plan.estimates if e.method == plan.method), None)
    limit = float(settings.SMARTCART_OUTAGE_INLINE_MAX_MS)
    predicted = None if estimate is None else estimate.predicted_ms
    if estimate is not None and estimate.exact and predicted is not None and predicted <= limit:
        reason = (
            f"broker down: {plan.method} predicted {estimate.predicted_ms:.1f} ms <= "
            f"{limit:g} ms, solved in the request"
        )
        return RouteChoice(
            OptimizationRun.Route.INLINE,
            budget_ms,
            estimate.predicted_ms,
            reason,
            plan.method,
            plan.to_dict(),
        )
    raise outage_error()


def outage_error() -> ServiceUnavailable:
    return ServiceUnavailable(
        "Improve cart is unavailable for a moment (our job queue is down) and your cart is too "
        "large to improve right away. Your cart is unchanged; please try again shortly.",
        code="optimizer_unavailable",
        retry_after=settings.SMARTCART_OUTAGE_RETRY_S,
    )
