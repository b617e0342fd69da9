"""Where an improve-cart job runs: inline in the request, the ``cpu`` queue or the ``gpu`` queue.

Tiny carts are answered in the request (a queue round trip costs more than the solve). Large
carts go to the GPU queue when GPU workers exist, unless that queue is backed up: then the job
goes to the CPU queue with a time budget, so the shopper gets a good answer now instead of a
perfect one late (Jet.com's "GPU busy" failure; we degrade, never fail).

Settings (read with defaults, so they are optional):

- ``SMARTCART_INLINE_MAX_MS`` (5): solve in the request when predicted at most this.
- ``SMARTCART_GPU_QUEUE`` (None): True/False says whether GPU workers serve the ``gpu``
  queue; None asks ``gpu_engine.gpu_available()`` in this process.
- ``SMARTCART_GPU_MIN_LINES`` (16): smaller carts stay on the CPU even when a GPU exists.
- ``SMARTCART_GPU_QUEUE_MAX`` (8): waiting ``gpu`` messages past which jobs go to the CPU.
- ``SMARTCART_DEFAULT_BUDGET_MS`` (2000) and ``SMARTCART_CPU_FALLBACK_BUDGET_MS`` (500): solver
  budgets for a queued job and for one diverted from a busy GPU queue.
"""

import logging
from dataclasses import dataclass

from django.conf import settings

from gpu_engine import CartProblem, gpu_available
from gpu_engine.rates import cpu_full_rate
from smartcart.models import OptimizationRun

logger = logging.getLogger(__name__)

Route = OptimizationRun.Route


@dataclass(frozen=True, slots=True)
class RouteChoice:
    route: str
    budget_ms: int | None
    predicted_ms: float
    reason: str


def _setting(name: str, default):
    return getattr(settings, name, default)


def predicted_cpu_ms(problem: CartProblem) -> float:
    """Predicted milliseconds of an exact CPU solve: a full search over every assignment at
    the measured rate, an upper bound for the smarter exact solvers on small carts."""
    return problem.complexity / cpu_full_rate() * 1000.0


def gpu_queue_enabled() -> bool:
    configured = _setting("SMARTCART_GPU_QUEUE", None)
    if configured is not None:
        return bool(configured)
    return gpu_available()


def gpu_queue_backlog(*, broker_url: str | None = None) -> int:
    """Messages waiting in the broker's ``gpu`` queue (0 with no broker: in-process tasks).

    A passive declare is the broker's own count (Redis: the list length, over priorities);
    when the broker cannot answer, the queue is taken as empty rather than failing the
    shopper's request.
    """
    from storefront.celery import app

    if app.conf.task_always_eager:
        return 0
    try:
        with app.connection_for_read(broker_url) as connection:
            declared = connection.default_channel.queue_declare(queue=Route.GPU, passive=True)
            return int(declared.message_count)
    except Exception:  # the broker being down must not break routing; the enqueue will tell
        logger.warning("Could not read the gpu queue length; assuming it is empty", exc_info=True)
        return 0


def route_choose(*, problem: CartProblem, budget_ms: int | None = None) -> RouteChoice:
    """Pick inline, ``gpu`` or ``cpu`` for ``problem`` from its features and the GPU's load."""
    predicted = predicted_cpu_ms(problem)
    inline_max = float(_setting("SMARTCART_INLINE_MAX_MS", 5))
    queued_budget = budget_ms or int(_setting("SMARTCART_DEFAULT_BUDGET_MS", 2000))
    if predicted <= inline_max:
        return RouteChoice(
            Route.INLINE,
            budget_ms,
            predicted,
            f"predicted {predicted:.2f} ms <= inline limit {inline_max:g} ms",
        )
    min_lines = int(_setting("SMARTCART_GPU_MIN_LINES", 16))
    if problem.n_items < min_lines or not gpu_queue_enabled():
        why = "no GPU workers" if problem.n_items >= min_lines else f"< {min_lines} lines"
        return RouteChoice(Route.CPU, queued_budget, predicted, f"CPU queue ({why})")
    backlog = gpu_queue_backlog()
    queue_max = int(_setting("SMARTCART_GPU_QUEUE_MAX", 8))
    if backlog > queue_max:
        fallback = int(_setting("SMARTCART_CPU_FALLBACK_BUDGET_MS", 500))
        budget = min(queued_budget, fallback)
        return RouteChoice(
            Route.CPU,
            budget,
            predicted,
            f"GPU queue busy ({backlog} waiting > {queue_max}): CPU with a {budget} ms budget",
        )
    return RouteChoice(Route.GPU, queued_budget, predicted, f"GPU queue ({backlog} waiting)")
