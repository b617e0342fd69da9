"""Rate limits of the API's own: token requests per client address against guessing, counted
atomically (``storefront.security.throttles``). With Redis down they are counted per process
(``storefront.security.ratelimit.window_retry_after``'s ``"local"`` direction), so logins keep
working.
Starting optimizations is limited by the service (``smartcart.ratelimit``), for the API and the
web page alike."""

from storefront.security.throttles import FixedWindowRateThrottle


class TokenObtainRateThrottle(FixedWindowRateThrottle):
    scope = "token"
