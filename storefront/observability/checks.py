"""The checks behind ``GET /health/``: database, cache, broker and worker heartbeat. Each
returns ``(ok, detail)``; none raises."""

import time
from collections.abc import Callable
from dataclasses import dataclass

import redis
from django.conf import settings
from django.core.cache import cache
from django.db import connection

from storefront.observability.heartbeat import heartbeat_age_s


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    detail: str
    ms: float


def database_check() -> tuple[bool, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return True, connection.vendor


def cache_check() -> tuple[bool, str]:
    key = "health:cache:probe"
    cache.set(key, "1", timeout=10)
    if cache.get(key) != "1":
        return False, "value written was not read back"
    return True, settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1]


def broker_check() -> tuple[bool, str]:
    url = settings.CELERY_BROKER_URL
    if not url.startswith("redis"):
        return True, "no broker: tasks run in-process"
    client = redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1)
    try:
        client.ping()
    finally:
        client.close()
    return True, "redis"


def worker_check() -> tuple[bool, str]:
    if not settings.HEALTH_CHECK_WORKER:
        return True, "not checked (HEALTH_CHECK_WORKER off)"
    beat = heartbeat_age_s()
    if beat is None:
        return False, "no worker heartbeat on record"
    age_s, hostname = beat
    if age_s > settings.HEALTH_WORKER_HEARTBEAT_S:
        return False, f"last heartbeat {age_s:.0f} s ago from {hostname}"
    return True, f"{hostname}, {age_s:.0f} s ago"


CHECKS: dict[str, Callable[[], tuple[bool, str]]] = {
    "database": database_check,
    "cache": cache_check,
    "broker": broker_check,
    "worker": worker_check,
}


def health_run() -> dict[str, CheckResult]:
    results = {}
    for name, check in CHECKS.items():
        start = time.perf_counter()
        try:
            ok, detail = check()
        except Exception as error:  # a check that cannot even run is a failed check
            ok, detail = False, f"{type(error).__name__}: {error}"[:200]
        results[name] = CheckResult(ok, detail, round((time.perf_counter() - start) * 1000, 1))
    return results
