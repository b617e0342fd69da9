"""What a locked-out login gets (django-axes' ``AXES_LOCKOUT_CALLABLE``): 429 with
``Retry-After``, the API's JSON error under ``/api/``, a page everywhere else.

Every failed attempt during a lockout restarts the cool-off
(``AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT``), so the full cool-off is the honest wait.
"""

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from storefront.errors import DomainError


def lockout_retry_after_s() -> int:
    return int(settings.AXES_COOLOFF_TIME.total_seconds())


class LoginLocked(DomainError):
    """Too many failed logins from this client (429); ``retry_after`` is in seconds."""

    http_status = 429
    default_code = "login_locked"

    def __init__(self) -> None:
        self.retry_after = lockout_retry_after_s()
        minutes = max(1, round(self.retry_after / 60))
        super().__init__(
            f"Too many failed logins. Try again in {minutes} minutes.", field="password"
        )


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials=None
) -> HttpResponse:
    locked = LoginLocked()
    response: HttpResponse
    if request.path.startswith("/api/"):
        response = JsonResponse({"error": locked.as_dict()}, status=locked.http_status)
    else:
        response = render(
            request,
            "registration/locked_out.html",
            {"retry_after_minutes": max(1, round(locked.retry_after / 60))},
            status=locked.http_status,
        )
    response["Retry-After"] = str(locked.retry_after)
    return response
