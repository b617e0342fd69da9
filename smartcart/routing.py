"""Where an improve-cart job runs: inline in the request, the ``cpu`` queue or the ``gpu`` queue.

The decision is the engine planner's (``gpu_engine.planning.planner.make_plan``): it predicts every
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
"""

import functools
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from gpu_engine import CartProblem, gpu_available
from gpu_engine.planning.planner import GpuState, Plan, make_plan
from gpu_engine.planning.profile import RateProfile, load_profile
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


# The broker is asked at most once a second per process: the depth only steers routing, and
# a request must never wait on a slow or absent broker more than once in a while.
BACKLOG_TTL_S = 1.0
BROKER_TIMEOUT_S = 0.25
_backlog_lock = threading.Lock()
_backlog_cache: dict[str | None, tuple[float, int]] = {}


def gpu_queue_backlog(*, broker_url: str | None = None) -> int:
    """Messages waiting in the broker's ``gpu`` queue (0 with no broker: in-process tasks),
    remembered for ``BACKLOG_TTL_S``.

    A declare is the broker's own count (Redis: the list length, over priorities).
    The connection gets a short timeout and no retries; when the broker cannot answer, the
    queue is taken as empty (and that answer is remembered too) rather than stalling or
    failing the shopper's request: the enqueue itself will tell.
    """
    from storefront.celery import app

    if app.conf.task_always_eager:
        return 0
    now = time.monotonic()
    with _backlog_lock:
        cached = _backlog_cache.get(broker_url)
        if cached is not None and now - cached[0] < BACKLOG_TTL_S:
            return cached[1]
        depth = _broker_gpu_depth(app, broker_url)
        _backlog_cache[broker_url] = (time.monotonic(), depth)
        return depth


def gpu_queue_backlog_forget() -> None:
    """Drops the remembered depth (tests; a process that must see the broker now)."""
    with _backlog_lock:
        _backlog_cache.clear()


def _broker_gpu_depth(app, broker_url: str | None) -> int:
    try:
        with app.connection_for_read(
            broker_url,
            connect_timeout=BROKER_TIMEOUT_S,
            transport_options={
                "max_retries": 0,
                "socket_connect_timeout": BROKER_TIMEOUT_S,
                "socket_timeout": BROKER_TIMEOUT_S,
            },
        ) as connection:
            # Not passive: on Redis a queue is its list and an empty one has no key, so a
            # passive declare fails exactly when the queue is empty (and kombu checks that
            # key without the global_keyprefix). Declaring creates nothing on Redis.
            declared = connection.default_channel.queue_declare(queue=str(Route.GPU))
            return int(declared.message_count)
    except Exception:  # the broker being down must not break routing; the enqueue will tell
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
    """Pick inline, ``gpu`` or ``cpu`` for ``problem`` (see the module docstring)."""
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
    if not gpu_queue_enabled():
        reason = (
            f"CPU queue: {cpu_plan.method} predicted {predicted or budget:.0f} ms, no GPU workers"
        )
        return RouteChoice(
            Route.CPU, budget, predicted, reason, cpu_plan.method, cpu_plan.to_dict()
        )
    backlog = gpu_queue_backlog()
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
