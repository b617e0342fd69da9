"""Rate limits of the API's own: token requests per client address (and per username) against
guessing. Starting optimizations is limited by the service (``smartcart.ratelimit``), for the
API and the web page alike."""

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle

from storefront.throttling import LocalOnOutageThrottleMixin


class TokenObtainRateThrottle(LocalOnOutageThrottleMixin, SimpleRateThrottle):
    # Redis down: counted per process, so logins keep working (storefront.ratelimit).
    scope = "token"

    def get_rate(self) -> str:
        rates = getattr(settings, "REST_FRAMEWORK", {}).get("DEFAULT_THROTTLE_RATES", {})
        return rates.get(self.scope) or getattr(settings, "SMARTCART_TOKEN_THROTTLE_RATE", "10/min")

    def get_cache_key(self, request, view) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}
