"""Domain errors raised by services and selectors.

The API's exception handler and the web views map them to HTTP responses by class
(``http_status``), so business code never imports DRF or builds responses itself.
``code`` is stable and machine-readable, ``message`` is for people, ``field`` names the
input at fault (or is ``None``).
"""

from django.core.exceptions import ValidationError


class DomainError(Exception):
    http_status = 400
    default_code = "invalid"

    def __init__(self, message: str, *, code: str | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.field = field

    def as_dict(self) -> dict[str, str | None]:
        return {"code": self.code, "message": self.message, "field": self.field}

    def __repr__(self) -> str:
        name = type(self).__name__
        return f"{name}(code={self.code!r}, field={self.field!r}, message={self.message!r})"


class ValidationFailed(DomainError):
    """The input is malformed or breaks a rule of the model (400)."""

    http_status = 400
    default_code = "invalid"


class NotFound(DomainError):
    """The object does not exist, or is not the caller's to see (404)."""

    http_status = 404
    default_code = "not_found"


class Conflict(DomainError):
    """The request is well formed but the current state refuses it: no stock, inactive offer,
    a stale cart version (409)."""

    http_status = 409
    default_code = "conflict"


class Throttled(DomainError):
    """Too many requests of one kind from one caller (429); ``retry_after`` is in seconds
    (the API's handler sends it as ``Retry-After``)."""

    http_status = 429
    default_code = "throttled"

    def __init__(
        self, message: str, *, retry_after: int, code: str | None = None, field: str | None = None
    ) -> None:
        super().__init__(message, code=code, field=field)
        self.retry_after = retry_after


def validation_failed_from(error: ValidationError) -> ValidationFailed:
    """Turns Django's ``ValidationError`` (from ``full_clean``) into one ``ValidationFailed``.

    The first message is kept, with its field, because a person fixes one thing at a time;
    every message stays reachable through ``__cause__``.
    """
    if hasattr(error, "error_dict"):
        field, errors = next(iter(error.error_dict.items()))
        first = errors[0]
        return ValidationFailed(
            " ".join(first.messages),
            code=first.code or ValidationFailed.default_code,
            field=None if field == "__all__" else field,
        )
    first = error.error_list[0]
    return ValidationFailed(
        " ".join(first.messages), code=first.code or ValidationFailed.default_code
    )
