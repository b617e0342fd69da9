"""The shared cache (Redis) as a dependency that may be down: ``ResilientRedisCache`` turns a
refused or timed-out connection into one exception, ``CacheUnavailable``, quickly.

Django's ``RedisCache`` waits for the operating system's TCP timeouts and raises redis-py's
own errors, so every cache call of a request (a throttle, the zone index's version stamp) was
a 500 while Redis was down. Here each connection has short socket timeouts, and after one
failure the backend answers ``CacheUnavailable`` at once for ``OUTAGE_RETRY_S`` seconds (a
circuit breaker, per process and location) instead of every request paying the timeout.

Callers choose what an outage means for them (``storefront.security.ratelimit`` documents each
limit's direction); nothing is silently served from a stale or local copy here.
"""

import functools
import logging
import threading
import time

import redis
from django.core.cache.backends.redis import RedisCache

from storefront.caching.backend import SharedClientRedisCache

logger = logging.getLogger(__name__)

_GUARDED = (
    "add",
    "get",
    "set",
    "touch",
    "delete",
    "get_many",
    "has_key",
    "incr",
    "set_many",
    "delete_many",
    "clear",
)
_CONNECTION_ERRORS = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)


class CacheUnavailable(Exception):
    """The shared cache did not answer (or failed moments ago and is not asked again yet)."""


# Django makes one cache instance per thread; an outage is a fact about the location.
_down_until: dict[str, float] = {}
_down_lock = threading.Lock()


def _guard(name: str):
    method = getattr(RedisCache, name)

    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        if time.monotonic() < _down_until.get(self._location_key, 0.0):
            raise CacheUnavailable(f"cache {self._location_key} is down")
        try:
            return method(self, *args, **kwargs)
        except _CONNECTION_ERRORS as error:
            with _down_lock:
                _down_until[self._location_key] = time.monotonic() + self._outage_retry_s
            logger.warning("Cache %s unavailable: %s", self._location_key, error)
            raise CacheUnavailable(str(error)) from error

    return guarded


class ResilientRedisCache(SharedClientRedisCache):
    """``RedisCache`` with socket timeouts and ``CacheUnavailable`` on outage.

    ``OPTIONS``: ``OUTAGE_RETRY_S`` (default 2 s: how long an outage is assumed before Redis
    is asked again); ``socket_connect_timeout`` / ``socket_timeout`` (default 0.25 / 0.5 s)
    and any other redis-py connection-pool option.
    """

    def __init__(self, server, params):
        options = dict(params.get("OPTIONS") or {})
        self._outage_retry_s = float(options.pop("OUTAGE_RETRY_S", 2.0))
        options.setdefault("socket_connect_timeout", 0.25)
        options.setdefault("socket_timeout", 0.5)
        super().__init__(server, {**params, "OPTIONS": options})
        self._location_key = server if isinstance(server, str) else ",".join(server)


for _name in _GUARDED:
    setattr(ResilientRedisCache, _name, _guard(_name))


def cache_outage_forget() -> None:
    """Forgets remembered outages (tests; a process that must ask Redis now)."""
    with _down_lock:
        _down_until.clear()
