"""Where an improve-cart job runs: inline in the request, the ``cpu`` queue or the ``gpu`` queue.

The decision is the engine planner's (``gpu_engine.planning.make_plan``): it predicts every
solver's time from the cart's features and the machine's measured rates. Here:

- a cart whose best exact CPU method is predicted to take at most ``SMARTCART_INLINE_MAX_MS``
  is solved in the request (a queue round trip costs more than the solve);
- otherwise, when GPU workers serve the ``gpu`` queue, the planner is asked again with the GPU
  present and the queue's depth; if it picks a GPU method the job goes to the ``gpu`` queue,
  unless more than ``SMARTCART_GPU_QUEUE_MAX`` jobs wait there: then the job goes to the CPU
  queue with a time budget, so the shopper gets a good answer now instead of a perfect one
  late (Jet.com's "GPU busy" failure; we degrade, never fail);
- everything else goes to the ``cpu`` queue.

Settings (``storefront/settings/base.py`` documents each):

- ``SMARTCART_INLINE_MAX_MS``: solve in the request when predicted at most this.
- ``SMARTCART_GPU_QUEUE``: True/False says whether GPU workers serve the ``gpu`` queue (set
  it on the web hosts); None asks ``gpu_engine.gpu_available()`` in this process.
- ``SMARTCART_GPU_QUEUE_MAX``: waiting ``gpu`` messages past which jobs go to the CPU.
- ``SMARTCART_DEFAULT_BUDGET_MS`` and ``SMARTCART_CPU_FALLBACK_BUDGET_MS``: solver budgets for
  a queued job and for one diverted from a busy GPU queue.
- ``SMARTCART_OUTAGE_INLINE_MAX_MS`` and ``SMARTCART_OUTAGE_RETRY_S``: the broker-down rule.

While the broker is down (the same cached probe that reads the ``gpu`` queue's depth says so)
nothing can be queued: a cart whose best exact CPU method is predicted within
``SMARTCART_OUTAGE_INLINE_MAX_MS`` is solved in the request, anything larger raises
``ServiceUnavailable`` (503, ``Retry-After``: ``SMARTCART_OUTAGE_RETRY_S``) before anything
is written.
"""

import functools
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from gpu_engine import (
    CartProblem,
    GpuState,
    Plan,
    RateProfile,
    gpu_available,
    load_profile,
    make_plan,
)
from smartcart.errors import ServiceUnavailable
from smartcart.models import OptimizationRun

logger = logging.getLogger(__name__)

Route = OptimizationRun.Route


@dataclass(frozen=True, slots=True)
class RouteChoice:
    route: str
    budget_ms: int | None
    predicted_ms: float | None
    reason: str
    method: str
    plan: dict[str, Any]


@functools.cache
def rate_profile() -> RateProfile:
    """The engine's rate profile, read once per process (recalibrating needs a restart)."""
    return load_profile()


def gpu_queue_enabled() -> bool:
    configured = settings.SMARTCART_GPU_QUEUE
    if configured is not None:
        return bool(configured)
    return gpu_available()


# The broker is asked at most once a second per process, one probe for both questions (is it
# up, how deep is the gpu queue): a request must never wait on a slow or absent broker more
# than once in a while, nor twice for one answer.
BROKER_TTL_S = 1.0
BROKER_TIMEOUT_S = 0.25
_broker_lock = threading.Lock()
_broker_cache: dict[str, tuple[float, "BrokerState"]] = {}


@dataclass(frozen=True, slots=True)
class BrokerState:
    """What one probe of the broker found: whether it accepts a connection, and the messages
    waiting in its ``gpu`` queue (0 when it is down or cannot say)."""

    up: bool
    gpu_backlog: int


def broker_state(*, broker_url: str | None = None) -> BrokerState:
    """The broker as last probed, at most ``BROKER_TTL_S`` ago (up with an empty queue when
    tasks run in-process).

    The depth is the broker's own count (Redis: the list length, over priorities). The probe
    has a short timeout and no retries; a broker that cannot answer is down, and that answer
    is remembered too rather than stalling every request.
    """
    from storefront.config.celery import app

    if app.conf.task_always_eager:
        return BrokerState(up=True, gpu_backlog=0)
    key = broker_url or str(app.conf.broker_url)
    now = time.monotonic()
    with _broker_lock:
        cached = _broker_cache.get(key)
        if cached is not None and now - cached[0] < BROKER_TTL_S:
            return cached[1]
        state = _broker_probe(app, broker_url)
        _broker_cache[key] = (time.monotonic(), state)
        return state


def broker_state_forget() -> None:
    """Drops the remembered probe (tests; a process that must see the broker now)."""
    with _broker_lock:
        _broker_cache.clear()


def _broker_probe(app, broker_url: str | None) -> BrokerState:
    try:
        with app.connection_for_write(
            broker_url,
            connect_timeout=BROKER_TIMEOUT_S,
            transport_options={
                "max_retries": 0,
                "socket_connect_timeout": BROKER_TIMEOUT_S,
                "socket_timeout": BROKER_TIMEOUT_S,
            },
        ) as connection:
            # Not ensure_connection(): kombu sleeps two seconds before its first retry, which
            # is what the short timeouts are there to avoid. Opening the channel connects (and
            # on Redis pings).
            channel = connection.default_channel
            return BrokerState(up=True, gpu_backlog=_gpu_depth(channel))
    except Exception as error:
        logger.warning("Broker unavailable: %s", error)
        return BrokerState(up=False, gpu_backlog=0)


def _gpu_depth(channel) -> int:
    try:
        # Not passive: on Redis a queue is its list and an empty one has no key, so a passive
        # declare fails exactly when the queue is empty (and kombu checks that key without
        # the global_keyprefix). Declaring creates nothing on Redis.
        return int(channel.queue_declare(queue=str(Route.GPU)).message_count)
    except Exception:  # the depth only steers routing; the enqueue itself will tell
        logger.warning("Could not read the gpu queue length; assuming it is empty", exc_info=True)
        return 0


def _predicted(plan: Plan) -> float | None:
    return next((e.predicted_ms for e in plan.estimates if e.method == plan.method), None)


def _exact(plan: Plan) -> bool:
    return any(e.method == plan.method and e.exact for e in plan.estimates)


def route_in_request(*, problem: CartProblem, budget_ms: int) -> RouteChoice:
    """Inline, whatever the prediction: for a caller that must answer within its own request
    and gives the budget itself (storefront's cart optimizer hook). The CPU planner picks the
    solver as it does for the inline route."""
    plan = make_plan(
        problem, budget_ms=budget_ms, profile=rate_profile(), gpu=GpuState(present=False)
    )
    reason = f"{plan.method} in the caller's request within {budget_ms} ms"
    return RouteChoice(
        Route.INLINE, budget_ms, _predicted(plan), reason, plan.method, plan.to_dict()
    )


def route_choose(*, problem: CartProblem, budget_ms: int | None = None) -> RouteChoice:
    """Pick inline, ``gpu`` or ``cpu`` for ``problem`` (see the module docstring). Raises
    ``ServiceUnavailable`` while the broker is down and the cart is too large to solve in the
    request."""
    budget = budget_ms or settings.SMARTCART_DEFAULT_BUDGET_MS
    profile = rate_profile()
    cpu_plan = make_plan(problem, budget_ms=budget, profile=profile, gpu=GpuState(present=False))
    predicted = _predicted(cpu_plan)
    inline_max = float(settings.SMARTCART_INLINE_MAX_MS)
    if _exact(cpu_plan) and predicted is not None and predicted <= inline_max:
        reason = f"{cpu_plan.method} predicted {predicted:.2f} ms <= inline limit {inline_max:g} ms"
        return RouteChoice(
            Route.INLINE, budget_ms, predicted, reason, cpu_plan.method, cpu_plan.to_dict()
        )
    broker = broker_state()
    if not broker.up:
        # Before any write: a 503 the client retries must leave nothing behind.
        return _route_outage(cpu_plan, budget_ms=budget_ms)
    if not gpu_queue_enabled():
        reason = (
            f"CPU queue: {cpu_plan.method} predicted {predicted or budget:.0f} ms, no GPU workers"
        )
        return RouteChoice(
            Route.CPU, budget, predicted, reason, cpu_plan.method, cpu_plan.to_dict()
        )
    backlog = broker.gpu_backlog
    gpu_plan = make_plan(
        problem, budget_ms=budget, profile=profile, gpu=GpuState(present=True, queue_depth=backlog)
    )
    if not gpu_plan.method.startswith("gpu-"):
        reason = f"CPU queue: the planner prefers {gpu_plan.method} ({backlog} GPU jobs waiting)"
        return RouteChoice(
            Route.CPU, budget, predicted, reason, gpu_plan.method, gpu_plan.to_dict()
        )
    queue_max = settings.SMARTCART_GPU_QUEUE_MAX
    if backlog > queue_max:
        fallback = min(budget, settings.SMARTCART_CPU_FALLBACK_BUDGET_MS)
        reason = (
            f"GPU queue busy ({backlog} waiting > {queue_max}): CPU with a {fallback} ms budget "
            f"instead of {gpu_plan.method}"
        )
        return RouteChoice(
            Route.CPU, fallback, predicted, reason, cpu_plan.method, cpu_plan.to_dict()
        )
    reason = f"GPU queue: {gpu_plan.method} predicted {_predicted(gpu_plan) or budget:.0f} ms"
    return RouteChoice(
        Route.GPU, budget, _predicted(gpu_plan), reason, gpu_plan.method, gpu_plan.to_dict()
    )


def _route_outage(cpu_plan: Plan, *, budget_ms: int | None) -> RouteChoice:
    """The broker is down: inline when the CPU plan's method is exact and predicted within
    ``SMARTCART_OUTAGE_INLINE_MAX_MS``, else ``ServiceUnavailable``."""
    predicted = _predicted(cpu_plan)
    limit = float(settings.SMARTCART_OUTAGE_INLINE_MAX_MS)
    if _exact(cpu_plan) and predicted is not None and predicted <= limit:
        reason = (
            f"broker down: {cpu_plan.method} predicted {predicted:.1f} ms <= {limit:g} ms, "
            "solved in the request"
        )
        return RouteChoice(
            Route.INLINE, budget_ms, predicted, reason, cpu_plan.method, cpu_plan.to_dict()
        )
    raise outage_error()


def outage_error() -> ServiceUnavailable:
    """Improve cart's 503 while the broker is down (also when it goes down between the
    route choice and the publish)."""
    return ServiceUnavailable(
        "Improve cart is unavailable for a moment (our job queue is down) and your cart is too "
        "large to improve right away. Your cart is unchanged; please try again shortly.",
        code="optimizer_unavailable",
        retry_after=settings.SMARTCART_OUTAGE_RETRY_S,
    )
