"""Fixed-window request limits counted in Django's cache, so every web process shares them
(Redis in a deployment, see ``CACHES``). Used by Improve cart (``smartcart.ratelimit``) and
the password-reset form (``storefront.web.views.accounts``).

The counter of the current window is incremented atomically (``incr`` is atomic on Redis and
in the local-memory cache), so concurrent requests never both slip in.
"""

import math
import time

from django.core.cache import cache


def window_retry_after(*, key: str, allowed: int, window_s: int) -> int | None:
    """Counts one request under ``key`` in the current ``window_s`` window; once more than
    ``allowed`` were made in it, the seconds until the window ends, else None."""
    now = time.time()
    window = int(now // window_s)
    count = _incr(f"{key}:{window}", timeout_s=window_s)
    if count <= allowed:
        return None
    return max(1, math.ceil((window + 1) * window_s - now))


def _incr(key: str, *, timeout_s: int) -> int:
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
