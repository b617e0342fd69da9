"""DRF throttles counted atomically in the shared cache.

DRF's ``SimpleRateThrottle`` reads a history list, appends and writes it back: parallel
requests read the same list and all pass (13 through against 10/min). These count with
``storefront.security.ratelimit.window_retry_after`` (cache ``add`` + ``incr``), per client address
from ``storefront.security.client_ip``.
"""

import hashlib
from typing import Any, cast

from django.conf import settings
from rest_framework.throttling import BaseThrottle

from storefront.security.client_ip import client_ip
from storefront.security.ratelimit import parse_rate, window_retry_after


class FixedWindowRateThrottle(BaseThrottle):
    """Allows ``DEFAULT_THROTTLE_RATES[scope]`` requests per client address per window."""

    scope = ""

    def __init__(self) -> None:
        self._retry_after: int | None = None

    default_rate = "10/min"

    def get_rate(self) -> str | None:
        rest_framework = cast(dict[str, Any], settings.REST_FRAMEWORK)
        rates = rest_framework.get("DEFAULT_THROTTLE_RATES", {})
        return rates.get(self.scope, self.default_rate)

    def ident(self, request, view) -> str:
        return client_ip(request)

    def allow_request(self, request, view) -> bool:
        rate = parse_rate(self.get_rate())
        if rate is None:
            return True
        allowed, window_s = rate
        # Hashed: an IPv6 address or a user-chosen ident is not a safe cache key as it is.
        digest = hashlib.sha256(self.ident(request, view).encode()).hexdigest()[:32]
        self._retry_after = window_retry_after(
            key=f"throttle:{self.scope}:{digest}", allowed=allowed, window_s=window_s
        )
        return self._retry_after is None

    def wait(self) -> float | None:
        return self._retry_after
