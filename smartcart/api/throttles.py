"""Rate limits. ``optimize`` (settings' ``DEFAULT_THROTTLE_RATES``) per user for starting
optimizations; token requests per client address (and per username) against guessing."""

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle, UserRateThrottle


class OptimizeRateThrottle(UserRateThrottle):
    scope = "optimize"


class TokenObtainRateThrottle(SimpleRateThrottle):
    scope = "token"

    def get_rate(self) -> str:
        rates = getattr(settings, "REST_FRAMEWORK", {}).get("DEFAULT_THROTTLE_RATES", {})
        return rates.get(self.scope) or getattr(settings, "SMARTCART_TOKEN_THROTTLE_RATE", "10/min")

    def get_cache_key(self, request, view) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}
