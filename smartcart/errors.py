"""Domain errors of improve-cart that ``storefront.errors`` has no class for.

They subclass ``storefront.errors.DomainError``, so the API's one exception handler and the
web views map them by ``http_status`` like every other domain error.
"""

from storefront.errors import DomainError


class Throttled(DomainError):
    """Too many requests of one kind from one shopper (429); ``retry_after`` is in seconds."""

    http_status = 429
    default_code = "throttled"

    def __init__(
        self, message: str, *, retry_after: int, code: str | None = None, field: str | None = None
    ) -> None:
        super().__init__(message, code=code, field=field)
        self.retry_after = retry_after


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
