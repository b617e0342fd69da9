"""Every failure under ``/api/`` answers in the API's JSON error shape.

Some errors never reach DRF's exception handler: Django's own 400 for a body over
``DATA_UPLOAD_MAX_MEMORY_SIZE`` or more than ``DATA_UPLOAD_MAX_NUMBER_FIELDS`` form fields
(raised while parsing, rendered as an HTML page), a CSRF failure page, and any unhandled
exception (Django's HTML 500). This middleware sits outermost: it maps the exceptions it is
shown to the right status and code, and replaces any non-JSON error response under
``/api/`` with ``{"error": {"code", "message", "field"}}``.
"""

import logging

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation, TooManyFieldsSent
from django.http import HttpRequest, HttpResponse, JsonResponse

logger = logging.getLogger("django.request")

API_PREFIX = "/api/"

_BY_STATUS = {
    400: ("bad_request", "Bad request."),
    403: ("permission_denied", "You may not do this."),
    404: ("not_found", "Not found."),
    405: ("method_not_allowed", "Method not allowed."),
    413: ("request_too_large", "The request body is too large."),
    500: ("server_error", "Something went wrong on our side. Try again later."),
}


def _error(status: int, code: str, message: str) -> JsonResponse:
    return JsonResponse({"error": {"code": code, "message": message, "field": None}}, status=status)


def _for_exception(exc: Exception) -> JsonResponse | None:
    if isinstance(exc, RequestDataTooBig):
        return _error(413, "request_too_large", "The request body is too large.")
    if isinstance(exc, TooManyFieldsSent):
        return _error(400, "too_many_fields", "The request has too many fields.")
    if isinstance(exc, RecursionError):
        return _error(400, "nesting_too_deep", "The request is nested too deeply.")
    if isinstance(exc, SuspiciousOperation):
        return _error(400, "bad_request", "Bad request.")
    return None


class ApiJsonErrorsMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not request.path.startswith(API_PREFIX) or response.status_code < 400:
            return response
        if response.get("Content-Type", "").startswith("application/json"):
            return response
        if settings.DEBUG and response.status_code >= 500:
            return response  # the developer's traceback page
        code, message = _BY_STATUS.get(
            response.status_code, ("error", response.reason_phrase or "Error.")
        )
        replaced = _error(response.status_code, code, message)
        for header in ("Retry-After", "Allow", "WWW-Authenticate"):
            if header in response:
                replaced[header] = response[header]
        return replaced

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not request.path.startswith(API_PREFIX):
            return None
        mapped = _for_exception(exception)
        if mapped is not None:
            return mapped
        if settings.DEBUG:
            return None
        logger.error(
            "Internal Server Error: %s",
            request.path,
            exc_info=exception,
            extra={"status_code": 500, "request": request},
        )
        return _error(500, *_BY_STATUS[500])
