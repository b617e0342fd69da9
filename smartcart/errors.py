"""Domain errors of improve-cart that ``storefront.errors`` has no class for (``Throttled`` is
storefront's, re-exported here for the callers that import it from smartcart).

They subclass ``storefront.errors.DomainError``, so the API's one exception handler and the
web views map them by ``http_status`` like every other domain error.
"""

from storefront.errors import DomainError, Throttled

# Improve cart's 429 is the same error as placing orders too often: one class, one code.
__all__ = ["ServiceUnavailable", "Throttled"]


class ServiceUnavailable(DomainError):
    """A dependency is down (the broker): the request can be retried later as it is (503);
    ``retry_after`` is in seconds. Raised before anything is written."""

    http_status = 503
    default_code = "service_unavailable"

    def __init__(
        self, message: str, *, retry_after: int, code: str | None = None, field: str | None = None
    ) -> None:
        super().__init__(message, code=code, field=field)
        self.retry_after = retry_after
