"""Fixed-window request limits counted in Django's cache, so every web process shares them
(Redis in a deployment, see ``CACHES``). Used by Improve cart (``smartcart.ratelimit``),
placing orders (``storefront.checkout.ratelimit``), both through ``throttle_rate_check``, and
the password-reset form (``storefront.accounts.services``).

The counter of the current window is incremented atomically (``incr`` is atomic on Redis and
in the local-memory cache), so concurrent requests never both slip in.

When the shared cache is down (``storefront.caching.cache.CacheUnavailable``) each limit fails
in the direction its caller chose, ``on_outage``:

- ``"local"``: counted in this process's memory instead, so the limit holds per process (at
  most the limit times the number of web processes). Improve cart and the API token
  endpoint: shoppers keep working, and abuse stays bounded (Improve cart can only solve tiny
  carts inline without the broker, which is the same Redis; failed logins are also locked
  out in the database).
- ``"closed"``: refused for one window. The password-reset mail: it cannot be queued without
  the broker anyway, and an unlimited form would let anyone flood a mailbox.
- ``"open"``: not counted (for limits that only smooth load).
"""

import math
import time
from typing import Literal

from django.conf import settings
from django.core.cache import cache
from django.core.cache.backends.base import BaseCache
from django.core.cache.backends.locmem import LocMemCache

from storefront.caching.cache import CacheUnavailable
from storefront.errors import Throttled

Outage = Literal["local", "closed", "open"]

# Per process: the counters a limit falls back to while the shared cache is down.
_local_cache = LocMemCache("storefront-ratelimit-outage", {"OPTIONS": {"MAX_ENTRIES": 100_000}})


def local_fallback_cache() -> BaseCache:
    return _local_cache


_PERIODS_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_rate(rate: str | None) -> tuple[int, int] | None:
    """``"10/min"`` -> ``(10, 60)``; None or empty: no limit."""
    if not rate:
        return None
    count, period = rate.split("/")
    return int(count), _PERIODS_S[period.strip()[0]]


def throttle_rate(*, scope: str) -> tuple[int, int] | None:
    """``(requests, window seconds)`` of ``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"][scope]``
    (``"10/min"`` -> ``(10, 60)``), or ``None``: no limit."""
    rates = settings.REST_FRAMEWORK.get("DEFAULT_THROTTLE_RATES")
    return parse_rate(rates.get(scope) if isinstance(rates, dict) else None)


def throttle_rate_check(*, scope: str, key: str, too_often: str, on_outage: Outage) -> None:
    """Counts one request under ``key`` against the ``scope`` rate; once it is used up,
    ``Throttled`` (429) saying ``too_often`` and the seconds until the window ends."""
    rate = throttle_rate(scope=scope)
    if rate is None:
        return
    allowed, window_s = rate
    retry_after = window_retry_after(
        key=key, allowed=allowed, window_s=window_s, on_outage=on_outage
    )
    if retry_after is not None:
        raise Throttled(
            f"{too_often} Try again in {retry_after} s.",
            code="throttled",
            retry_after=retry_after,
        )


def window_retry_after(
    *, key: str, allowed: int, window_s: int, on_outage: Outage = "local"
) -> int | None:
    """Counts one request under ``key`` in the current ``window_s`` window; once more than
    ``allowed`` were made in it, the seconds until the window ends, else None. ``on_outage``:
    what the limit does while the shared cache is down (see the module's docstring)."""
    now = time.time()
    window = int(now // window_s)
    try:
        count = _incr(cache, f"{key}:{window}", timeout_s=window_s)
    except CacheUnavailable:
        if on_outage == "open":
            return None
        if on_outage == "closed":
            return max(1, math.ceil((window + 1) * window_s - now))
        count = _incr(_local_cache, f"{key}:{window}", timeout_s=window_s)
    if count <= allowed:
        return None
    return max(1, math.ceil((window + 1) * window_s - now))


def _incr(cache: BaseCache, key: str, *, timeout_s: int) -> int:
    """The window's count after this request. Adding the key first: a client's first request
    in a window (the usual case) costs one cache round trip (Redis: SET NX), a later one three
    (SET NX, then EXISTS and INCRBY)."""
    if cache.add(key, 1, timeout=timeout_s + 1):
        return 1
    try:
        return cache.incr(key)
    except ValueError:  # the key expired between the two calls: this is a new window
        if cache.add(key, 1, timeout=timeout_s + 1):
            return 1
        return cache.incr(key)
