"""Celery workers say they are alive: a thread in each worker's main process writes the time
into the shared cache every few seconds, and ``/health/`` reads it back
(``HEALTH_WORKER_HEARTBEAT_S``). A worker that died, hung or lost Redis stops writing."""

import logging
import socket
import threading
import time

from django.conf import settings
from django.core.cache import cache

logger = logging.getLogger(__name__)

HEARTBEAT_KEY = "health:worker:heartbeat"


def heartbeat_write(*, hostname: str) -> None:
    cache.set(
        HEARTBEAT_KEY,
        {"at": time.time(), "hostname": hostname},
        timeout=settings.HEALTH_WORKER_HEARTBEAT_S * 2,
    )


def heartbeat_age_s() -> tuple[float, str] | None:
    """Seconds since the last heartbeat of any worker and its hostname; None: none on record."""
    beat = cache.get(HEARTBEAT_KEY)
    if not beat:
        return None
    return time.time() - float(beat["at"]), str(beat.get("hostname", "?"))


def _beat_forever(hostname: str, every_s: float) -> None:
    while True:
        try:
            heartbeat_write(hostname=hostname)
        except Exception:  # the cache is down: /health/ will say so; keep trying
            logger.warning("Worker heartbeat could not be written", exc_info=True)
        time.sleep(every_s)


def on_worker_ready(sender=None, **kwargs) -> None:
    hostname = getattr(sender, "hostname", None) or socket.gethostname()
    every_s = max(1.0, settings.HEALTH_WORKER_HEARTBEAT_S / 4)
    threading.Thread(
        target=_beat_forever, args=(hostname, every_s), name="health-heartbeat", daemon=True
    ).start()
