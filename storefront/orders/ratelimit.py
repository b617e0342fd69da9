"""How often one shopper may place orders, from the web pages and the API alike: a signed-in
shopper is counted by account, a guest by client address (DRF's ident, which honours
``NUM_PROXIES``), so new guest sessions do not reset the count.

The rate is ``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["order_place"]`` (env
``ORDER_PLACE_THROTTLE_RATE``, ``"10/min"``), counted in Django's cache by
``storefront.ratelimit.window_retry_after``. A retried request with the same idempotency key
counts too: the limit is far above what a person clicks.
"""

import hashlib

from django.conf import settings
from django.http import HttpRequest
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from storefront.errors import Throttled
from storefront.ratelimit import window_retry_after

_PERIODS_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def order_place_rate() -> tuple[int, int] | None:
    """``(orders, window seconds)``, or ``None``: no limit."""
    rates = settings.REST_FRAMEWORK.get("DEFAULT_THROTTLE_RATES")
    rate = rates.get("order_place") if isinstance(rates, dict) else None
    if not rate:
        return None
    count, period = rate.split("/")
    return int(count), _PERIODS_S[period.strip()[0]]


def order_place_ident(request: HttpRequest | Request) -> str:
    """Whom a place-order request counts against: the account, else the client address."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return f"user:{user.pk}"
    # get_ident reads only request.META, which HttpRequest has; the stub asks for a DRF Request.
    client = BaseThrottle().get_ident(request)  # type: ignore[arg-type]
    # Hashed: a forwarded-for list is not a safe cache key.
    return "client:" + hashlib.sha256(str(client).encode()).hexdigest()[:32]


def order_place_rate_check(*, ident: str) -> None:
    """Counts one attempt to place an order by ``ident``; ``Throttled`` (429, with the
    seconds until the window ends) once the rate is used up."""
    rate = order_place_rate()
    if rate is None:
        return
    allowed, window_s = rate
    retry_after = window_retry_after(
        key=f"storefront:order-place:{ident}",
        allowed=allowed,
        window_s=window_s,
        # Redis down: counted per process. Shoppers can still buy (placing needs only the
        # database), and the limit stays bounded by the number of web processes.
        on_outage="local",
    )
    if retry_after is not None:
        raise Throttled(
            f"You placed orders too often. Try again in {retry_after} s.",
            code="throttled",
            retry_after=retry_after,
        )
