"""DRF throttles that survive the shared cache being down.

DRF's ``SimpleRateThrottle`` keeps its history in Django's cache; with Redis down every
throttled request was a 500. ``LocalOnOutageThrottleMixin`` counts in this process's memory
for as long as the cache is unavailable: the ``"local"`` direction of ``storefront.ratelimit``
(the limit holds per process rather than not at all, and the request is served).
"""

from rest_framework.throttling import SimpleRateThrottle

from storefront.cache import CacheUnavailable
from storefront.ratelimit import local_fallback_cache


class LocalOnOutageThrottleMixin(SimpleRateThrottle):
    def allow_request(self, request, view) -> bool:
        try:
            return super().allow_request(request, view)
        except CacheUnavailable:
            self.cache = local_fallback_cache()
            return super().allow_request(request, view)
