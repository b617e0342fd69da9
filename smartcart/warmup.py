"""Compile the engine's kernels before a shopper's first request needs them.

Numba compiles (or loads from its cache) on first call, which takes seconds. Workers warm up
as they start; the web process warms up in a background thread at start, never inside a
request, and never in management commands such as ``migrate`` or under tests.

- solo/thread pools (the ``gpu`` queue): the worker process itself runs jobs; it starts
  warming up on ``worker_process_init`` and ``worker_ready`` waits for it to finish, so the
  first message finds the kernels compiled.
- prefork pools (the ``cpu`` queue): each child warms up on ``worker_process_init``, in a
  thread, because Celery gives a child only seconds to report itself alive. The parent never
  warms up: it must not touch CUDA before forking.

``SMARTCART_WARMUP`` (default True) turns all of it off.
"""

import logging
import os
import sys
import threading

from django.conf import settings

logger = logging.getLogger(__name__)

WEB_SERVERS = frozenset({"gunicorn", "uwsgi", "daphne", "uvicorn", "hypercorn"})
_lock = threading.Lock()
_done = threading.Event()


def warmup_enabled() -> bool:
    return bool(getattr(settings, "SMARTCART_WARMUP", True))


def engine_warmup() -> None:
    """Runs ``gpu_engine.warmup()`` and logs what it took; errors are logged, not raised
    (a cold kernel is slower, not broken)."""
    from gpu_engine import warmup

    try:
        timings = warmup()
    except Exception:
        logger.exception("gpu_engine warm-up failed; the first jobs will compile instead")
        return
    total = sum(timings.values())
    logger.info("gpu_engine warmed up in %.2f s: %s", total, timings)


def engine_warmup_once() -> None:
    """Warms up once per process; a second caller waits for the first to finish."""
    with _lock:
        if _done.is_set():
            return
        engine_warmup()
        _done.set()


def engine_warmup_in_background(name: str = "gpu-engine-warmup") -> threading.Thread:
    thread = threading.Thread(target=engine_warmup_once, name=name, daemon=True)
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
    if not warmup_enabled() or not is_web_server_process():
        return False
    engine_warmup_in_background()
    return True


# --- Celery signal handlers (connected in SmartcartConfig.ready) -----------------------------


def _is_prefork(pool) -> bool:
    return type(pool).__module__ == "celery.concurrency.prefork"


def on_worker_ready(sender=None, **kwargs) -> None:
    # Blocks until warm (joining a warm-up that worker_process_init began, for solo pools).
    if warmup_enabled() and not _is_prefork(getattr(sender, "pool", None)):
        engine_warmup_once()


def on_worker_process_init(**kwargs) -> None:
    # Sent in each prefork child, and by the solo pool in the worker process itself.
    if warmup_enabled():
        engine_warmup_in_background(name="gpu-engine-warmup-init")
