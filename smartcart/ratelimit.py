"""One rate limit for starting improve-cart runs, whichever way the shopper asks (REST API or
the web page's button), counted in Django's cache so every web process shares it (Redis in a
deployment, see ``CACHES``).

The rate is the API's ``optimize`` throttle rate (``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]``,
env ``OPTIMIZE_THROTTLE_RATE``): one number for the one action. DRF's throttle still guards
the API view itself; this limit also covers the web UI, and anonymous shoppers by cart.

A fixed window: the counter of the current window is incremented atomically (``incr`` is
atomic on Redis and in the local-memory cache), so concurrent requests never both slip in.
"""

import math
import time

from django.conf import settings
from django.core.cache import cache

from smartcart.errors import Throttled

_PERIODS_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def improve_rate() -> tuple[int, int] | None:
    """``(requests, window seconds)`` from the ``optimize`` rate (``"30/min"``); None: no limit."""
    rate = settings.REST_FRAMEWORK.get("DEFAULT_THROTTLE_RATES", {}).get("optimize")
    if not rate:
        return None
    count, period = rate.split("/")
    return int(count), _PERIODS_S[period.strip()[0]]


def improve_rate_check(*, ident: str) -> None:
    """Counts one improve-cart request of ``ident`` (``user:<id>`` or ``cart:<id>``); raises
    ``Throttled`` (429) with the seconds until the window ends once the rate is used up."""
    rate = improve_rate()
    if rate is None:
        return
    allowed, window_s = rate
    now = time.time()
    window = int(now // window_s)
    key = f"smartcart:improve:{ident}:{window}"
    count = _incr(key, timeout_s=window_s)
    if count > allowed:
        retry_after = max(1, math.ceil((window + 1) * window_s - now))
        raise Throttled(
            f"You asked to improve your cart too often. Try again in {retry_after} s.",
            code="throttled",
            retry_after=retry_after,
        )


def _incr(key: str, *, timeout_s: int) -> int:
    """The window's count after this request. Adding the key first: a shopper's first request
    in a window (the usual case, the rate is per minute) costs one cache round trip (Redis:
    SET NX), a later one three (SET NX, then EXISTS and INCRBY)."""
    if cache.add(key, 1, timeout=timeout_s + 1):
        return 1
    try:
        return cache.incr(key)
    except ValueError:  # the key expired between the two calls: this is a new window
        if cache.add(key, 1, timeout=timeout_s + 1):
            return 1
        return cache.incr(key)
