"""How often one shopper may place orders, from the web pages and the API alike: a signed-in
shopper is counted by account, a guest by client address (``storefront.security.client_ip``:
``X-Forwarded-For`` only from ``TRUSTED_PROXIES``), so new guest sessions do not reset the count.

The rate is ``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["order_place"]`` (env
``ORDER_PLACE_THROTTLE_RATE``, ``"10/min"``), counted in Django's cache by
``storefront.security.ratelimit.throttle_rate_check``. A retried request with the same
idempotency key counts too: the limit is far above what a person clicks.
"""

import functools
import hashlib

from django.http import HttpRequest
from rest_framework.request import Request

from storefront.security.client_ip import client_ip
from storefront.security.ratelimit import throttle_rate_check


def order_place_ident(request: HttpRequest | Request) -> str:
    """Whom a place-order request counts against: the account, else the client address."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return f"user:{user.pk}"
    # Hashed: an IPv6 address is not a safe cache key as it is.
    return "client:" + hashlib.sha256(client_ip(request).encode()).hexdigest()[:32]


def order_place_rate_check(*, ident: str) -> None:
    """Counts one attempt to place an order by ``ident``; ``Throttled`` (429, with the
    seconds until the window ends) once the rate is used up."""
    throttle_rate_check(
        scope="order_place",
        key=f"storefront:order-place:{ident}",
        too_often="You placed orders too often.",
        # Redis down: counted per process. Shoppers can still buy (placing needs only the
        # database), and the limit stays bounded by the number of web processes.
        on_outage="local",
    )


def order_place_rate_limited(method):
    """Counts every request to an API view method that places orders, before the
    ``Idempotency-Key`` replay (put it above ``idempotent``): a retried key counts too."""

    @functools.wraps(method)  # keeps the schema annotations of the decorators below
    def wrapper(view, request, *args, **kwargs):
        order_place_rate_check(ident=order_place_ident(request))
        return method(view, request, *args, **kwargs)

    return wrapper
