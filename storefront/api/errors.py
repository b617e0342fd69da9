"""The API's one exception handler: every error is ``{"error": {"code", "message", "field"}}``.

It maps, by class, storefront domain errors (``http_status``, ``code``, ``field``; a
``retry_after`` becomes the ``Retry-After`` header, as for smartcart's ``Throttled``), the
engine's ``ProblemError`` (400, with the field path), and DRF's own errors (parse errors,
validation, authentication, permission, throttling, 404, 405, 415). Headers DRF sets
(``WWW-Authenticate``, ``Retry-After``, ``Allow``) are kept. Anything else is a bug: it is
left to Django (500, logged).

Enabled by ``REST_FRAMEWORK["EXCEPTION_HANDLER"] = "storefront.api.errors.exception_handler"``.
"""

from typing import Any

from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from gpu_engine import ProblemError
from storefront.errors import DomainError


def error_body(code: str, message: str, field: str | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "field": field}}


def _first_validation_error(detail: Any, path: str = "") -> tuple[str | None, Any]:
    """The first (field path, ErrorDetail) of a nested DRF validation detail. Field paths join
    nested names with dots and list positions with brackets: ``lines[2].quantity``."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            if key in ("non_field_errors", "__all__"):
                sub_path = path
            elif path:
                sub_path = f"{path}.{key}"
            else:
                sub_path = str(key)
            found = _first_validation_error(value, sub_path)
            if found[1] is not None:
                return found
        return None, None
    if isinstance(detail, list):
        for index, value in enumerate(detail):
            nested = isinstance(value, dict | list)
            found = _first_validation_error(value, f"{path}[{index}]" if nested else path)
            if found[1] is not None:
                return found
        return None, None
    return (path or None), detail


def _api_exception_body(exc: exceptions.APIException) -> dict[str, Any]:
    if isinstance(exc, exceptions.ValidationError):
        field, detail = _first_validation_error(exc.detail)
        if detail is None:
            return error_body("invalid", "Invalid input.")
        code = getattr(detail, "code", None) or "invalid"
        return error_body(str(code), str(detail), field)
    detail = exc.detail
    if isinstance(detail, dict | list):
        _, first = _first_validation_error(detail)
        message = str(first) if first is not None else str(exc.default_detail)
    else:
        message = str(detail)
    code = getattr(detail, "code", None) or exc.default_code
    return error_body(str(code), message)


def exception_handler(exc: Exception, context: dict) -> Response | None:
    if isinstance(exc, DomainError):
        body = error_body(exc.code, exc.message, exc.field)
        details = getattr(exc, "details", None)
        if details is not None:  # e.g. what changed since a review (CheckoutChanged)
            body["error"]["details"] = details
        retry_after = getattr(exc, "retry_after", None)
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
        return Response(body, status=exc.http_status, headers=headers)
    if isinstance(exc, ProblemError):
        return Response(
            error_body("problem_invalid", str(exc), exc.field), status=status.HTTP_400_BAD_REQUEST
        )
    # DRF turns Django's Http404 and PermissionDenied into its own and sets the headers.
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.APIException):
        response.data = _api_exception_body(exc)
    elif response.status_code == status.HTTP_404_NOT_FOUND:
        response.data = error_body("not_found", "Not found.")
    else:
        response.data = error_body("permission_denied", "You may not do this.")
    return response


# --- OpenAPI: the error body and the responses each endpoint documents ----------------------

ErrorSerializer = inline_serializer(
    name="Error",
    fields={
        "error": inline_serializer(
            name="ErrorDetail",
            fields={
                "code": serializers.CharField(help_text="Stable, machine-readable reason."),
                "message": serializers.CharField(help_text="For people."),
                "field": serializers.CharField(
                    allow_null=True, help_text="The input at fault (a dotted path), or null."
                ),
            },
        )
    },
)

_ERROR_DESCRIPTIONS = {
    400: "Bad input: malformed JSON, a missing or invalid field.",
    401: "Not signed in: send `Authorization: Token <key>` or a session cookie.",
    403: "Forbidden (for session auth: a missing or wrong CSRF token).",
    404: "No such object, or not yours.",
    409: "The current state refuses the request (stale cart, stock, price).",
    412: "`If-Match` names an older version of the cart: nothing was written; the body's "
    "`cart` is the cart as it is now, its `ETag` the header's.",
    413: "The request body is larger than `DATA_UPLOAD_MAX_MEMORY_SIZE`.",
    415: "Unsupported media type: send JSON.",
    422: "`Idempotency-Key` reused for a different request.",
    429: "Too many requests: retry after `Retry-After` seconds.",
    503: "A dependency is down for a moment: retry after `Retry-After` seconds.",
}


def error_responses(*codes: int, **descriptions: str) -> dict[int, OpenApiResponse]:
    """OpenAPI responses for the given HTTP error statuses; ``descriptions`` override the
    generic text per status, keyed ``e409="..."``."""
    return {
        code: OpenApiResponse(
            ErrorSerializer, description=descriptions.get(f"e{code}", _ERROR_DESCRIPTIONS[code])
        )
        for code in codes
    }
