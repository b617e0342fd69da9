"""One rate limit for starting improve-cart runs, whichever way the shopper asks (REST API or
the web page's button), counted in Django's cache so every web process shares it (Redis in a
deployment, see ``CACHES``).

The rate is the API's ``optimize`` throttle rate (``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]``,
env ``OPTIMIZE_THROTTLE_RATE``): one number for the one action. DRF's throttle still guards
the API view itself; this limit also covers the web UI, and anonymous shoppers by cart.

A fixed window, counted by ``storefront.ratelimit.window_retry_after``.
"""

from django.conf import settings

from smartcart.errors import Throttled
from storefront.ratelimit import window_retry_after

_PERIODS_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def improve_rate() -> tuple[int, int] | None:
    """``(requests, window seconds)`` from the ``optimize`` rate (``"30/min"``); None: no limit."""
    rates = settings.REST_FRAMEWORK.get("DEFAULT_THROTTLE_RATES")
    rate = rates.get("optimize") if isinstance(rates, dict) else None
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
    retry_after = window_retry_after(
        key=f"smartcart:improve:{ident}",
        allowed=allowed,
        window_s=window_s,
        # Redis down: counted per process. The broker is that Redis, so only carts small
        # enough to solve in the request can be improved meanwhile: bounded work.
        on_outage="local",
    )
    if retry_after is not None:
        raise Throttled(
            f"You asked to improve your cart too often. Try again in {retry_after} s.",
            code="throttled",
            retry_after=retry_after,
        )
