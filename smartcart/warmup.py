"""Compile the engine's kernels before a shopper's first request needs them.

Numba compiles (or loads from its cache) on first call, which takes seconds. Workers warm up
as they start; a web server process (runserver's serving child, each gunicorn worker) warms up
before it accepts its first request, never inside one, and never in management commands such
as ``migrate`` or under tests. ``manage.py warmup`` compiles everything once and leaves it in
Numba's on-disk cache (``__pycache__`` next to the sources, or ``NUMBA_CACHE_DIR``), so that a
server started after it only loads: ``make demo`` and the production start run it first.

Two kinds of warm-up, each at most once per process:

- ``cpu``: ``gpu_engine.warmup(include_gpu=False)``, the planner and the catalog kernels' CPU
  twins (feed import, stored cheapest offers), without touching CUDA.
  The web process and the ``cpu`` queue's workers only ever solve on the CPU, and must not
  hold a CUDA context (GPU memory per process; a prefork parent must never create one before
  forking).
- ``gpu``: ``gpu_engine.warmup()``, CPU and GPU kernels, only in workers that consume the
  ``gpu`` queue (one solo worker per GPU).

When: each prefork child starts the ``cpu`` warm-up on ``worker_process_init`` in a thread
(Celery gives a child only seconds to report itself alive); a solo or thread pool gets the
same signal in the worker process itself, and on ``worker_ready`` the worker waits for that
warm-up and, if it serves the ``gpu`` queue, runs the ``gpu`` one, before its first message.

``SMARTCART_WARMUP`` (default True) turns all of it off.
"""

import logging
import os
import sys
import threading
import time
from collections.abc import Callable

from django.conf import settings

logger = logging.getLogger(__name__)

WEB_SERVERS = frozenset({"gunicorn", "uwsgi", "daphne", "uvicorn", "hypercorn"})
CPU, GPU = "cpu", "gpu"
_locks = {CPU: threading.Lock(), GPU: threading.Lock()}
_done: set[str] = set()


def warmup_enabled() -> bool:
    return settings.SMARTCART_WARMUP


def cpu_warmup() -> dict[str, float]:
    """Runs every CPU solver (``gpu_engine.warmup(include_gpu=False)``, which never touches
    CUDA) and then the planner once on the same tiny cart. Returns seconds per solver."""
    from gpu_engine import WARMUP_CART, CartProblem, solve, warmup
    from gpu_engine.catalog import cheapest_offers_warmup, radix_tree_warmup

    timings = warmup(include_gpu=False)
    start = time.perf_counter()
    solve(CartProblem.from_dict(WARMUP_CART), allow_gpu=False)
    timings["planner"] = time.perf_counter() - start
    # The catalog jobs (feed import, stored cheapest offers) run on the cpu queue too.
    for name, kernel_warmup in (("cheapest", cheapest_offers_warmup), ("radix", radix_tree_warmup)):
        start = time.perf_counter()
        kernel_warmup(device="cpu")
        timings[name] = time.perf_counter() - start
    # Pricing carts and product pages match destinations in the zone index.
    from storefront.catalog.zone_index import zone_index_warmup

    start = time.perf_counter()
    zone_index_warmup(device="cpu")
    timings["zone_index"] = time.perf_counter() - start
    return timings


def _gpu_warmup() -> dict[str, float]:
    from gpu_engine import warmup

    timings = warmup()
    timings.update(catalog_gpu_warmup())
    return timings


def catalog_gpu_warmup() -> dict[str, float]:
    """The catalog kernels a gpu worker's jobs run on the GPU, where the settings send them
    there: the stored cheapest offers' recompute (``STOREFRONT_CHEAPEST_QUEUE=gpu`` with a
    device other than ``cpu``) and the shipping-zone index (``STOREFRONT_ZONE_INDEX_DEVICE``)."""
    from gpu_engine.catalog import cheapest_offers_warmup
    from storefront.catalog.zone_index import zone_index_warmup

    timings: dict[str, float] = {}
    steps: list[tuple[str, Callable[[], object]]] = []
    cheapest = settings.STOREFRONT_CHEAPEST_DEVICE
    if settings.STOREFRONT_CHEAPEST_QUEUE == GPU and cheapest != CPU:
        steps.append(("cheapest-gpu", lambda: cheapest_offers_warmup(device=cheapest)))
    zones = settings.STOREFRONT_ZONE_INDEX_DEVICE
    if zones != CPU:
        steps.append(("zone-index-gpu", lambda: zone_index_warmup(device=zones)))
    for name, step in steps:
        start = time.perf_counter()
        step()
        timings[name] = time.perf_counter() - start
    return timings


WARMUPS: dict[str, Callable[[], dict[str, float]]] = {CPU: cpu_warmup, GPU: _gpu_warmup}


def engine_warmup(kind: str = CPU) -> None:
    """Runs one kind of warm-up and logs what it took; errors are logged, not raised (a cold
    kernel is slower, not broken)."""
    try:
        timings = WARMUPS[kind]()
    except Exception:
        logger.exception("gpu_engine %s warm-up failed; the first jobs will compile instead", kind)
        return
    logger.info("gpu_engine %s warm-up took %.2f s: %s", kind, sum(timings.values()), timings)


def engine_warmup_once(kind: str = CPU) -> None:
    """Warms up once per process and kind; a second caller waits for the first to finish."""
    with _locks[kind]:
        if kind in _done:
            return
        engine_warmup(kind)
        _done.add(kind)


def engine_warmup_in_background(kind: str = CPU) -> threading.Thread:
    thread = threading.Thread(
        target=engine_warmup_once, args=(kind,), name=f"gpu-engine-{kind}-warmup", daemon=True
    )
    thread.start()
    return thread


def is_web_server_process(argv: list[str] | None = None, environ=None) -> bool:
    """True in a WSGI/ASGI server, or in ``runserver``'s serving child (not its reloader).
    False for every other command (migrate, shell, celery, pytest)."""
    argv = sys.argv if argv is None else argv
    environ = os.environ if environ is None else environ
    if not argv:
        return False
    program = os.path.basename(argv[0])
    if program in WEB_SERVERS or any(os.path.basename(arg) in WEB_SERVERS for arg in argv[:3]):
        return True
    if len(argv) > 1 and argv[1] == "runserver":
        # The autoreloader's parent only watches files; its child (RUN_MAIN) serves.
        return environ.get("RUN_MAIN") == "true" or "--noreload" in argv
    return False


def web_warmup_start() -> bool:
    """In a web server process: warm up now, before the server binds or its worker accepts
    (a background thread let the first request compile the zone index's kernels itself while
    the thread compiled the solvers: 27 s for the first product page of a new clone)."""
    if not warmup_enabled() or not is_web_server_process():
        return False
    engine_warmup_once(CPU)
    return True


# --- Celery signal handlers (connected in SmartcartConfig.ready) -----------------------------


def _is_prefork(pool) -> bool:
    return type(pool).__module__ == "celery.concurrency.prefork"


def _consumed_queues(consumer) -> set[str]:
    task_consumer = getattr(consumer, "task_consumer", None)
    return {queue.name for queue in getattr(task_consumer, "queues", ())}


def on_worker_ready(sender=None, **kwargs) -> None:
    if not warmup_enabled() or _is_prefork(getattr(sender, "pool", None)):
        return
    # Joins the warm-up worker_process_init began, then the GPU kernels if this worker
    # serves the gpu queue: the first message finds everything compiled.
    engine_warmup_once(CPU)
    if GPU in _consumed_queues(sender):
        engine_warmup_once(GPU)


def on_worker_process_init(**kwargs) -> None:
    # Sent in each prefork child, and by the solo pool in the worker process itself, in the
    # thread that runs its jobs: numba's thread count (GPU_ENGINE_HOST_THREADS) is per thread.
    from gpu_engine.batch import host_threads_apply

    logger.info("gpu_engine host threads: %s", host_threads_apply() or "numba's default")
    if warmup_enabled():
        engine_warmup_in_background(CPU)
