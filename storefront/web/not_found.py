"""The shop's own 404 page even with DEBUG on (the demo runs with DEBUG=1).

With DEBUG, Django answers a 404 with its technical page, which lists every URL pattern of
the project. Without DEBUG ``handler404`` already renders ``404.html``; this middleware does
the same with DEBUG for the two ways a page is not found: no URL matched (the request has no
``resolver_match``) or a view raised ``Http404``. A view that renders its own 404 page keeps
it, and the API keeps its JSON errors (``storefront.security.middleware``)."""

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

API_PREFIX = "/api/"


class BrandedNotFoundMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            settings.DEBUG
            and response.status_code == 404
            and getattr(request, "resolver_match", None) is None
            and not request.path.startswith(API_PREFIX)
        ):
            return render(request, "404.html", status=404)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if (
            settings.DEBUG
            and isinstance(exception, Http404)
            and not request.path.startswith(API_PREFIX)
        ):
            return render(request, "404.html", status=404)
        return None
