"""``GET /health/`` (200 when every check passes, else 503), ``GET /health/live`` (the
process answers) and ``GET /metrics`` (Prometheus, only to ``METRICS_ALLOWED_NETWORKS``)."""

import functools
import ipaddress

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from django_prometheus.exports import ExportToDjangoView

from storefront.observability.checks import health_run
from storefront.security.client_ip import client_ip


@never_cache
@require_GET
def liveness(request: HttpRequest) -> HttpResponse:
    """The process answers (no dependency checked): for a supervisor's liveness probe, and
    the load test's trivial view (the framework's own ceiling on this stack)."""
    return HttpResponse("ok", content_type="text/plain")


@never_cache
@require_GET
def health(request: HttpRequest) -> JsonResponse:
    results = health_run()
    healthy = all(result.ok for result in results.values())
    body = {
        "status": "ok" if healthy else "failing",
        "checks": {
            name: {"ok": r.ok, "detail": r.detail, "ms": r.ms} for name, r in results.items()
        },
    }
    return JsonResponse(body, status=200 if healthy else 503)


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@functools.lru_cache(maxsize=4)
def _networks(configured: tuple[str, ...]) -> tuple[Network, ...]:
    # Keyed on the setting's value: parsed once per process, and again only when the setting
    # changes (tests, ``override_settings``), never on each scrape.
    return tuple(ipaddress.ip_network(network, strict=False) for network in configured)


def _allowed_networks() -> tuple[Network, ...]:
    return _networks(tuple(settings.METRICS_ALLOWED_NETWORKS))


def _metrics_allowed(request: HttpRequest) -> bool:
    try:
        address = ipaddress.ip_address(client_ip(request))
    except ValueError:
        return False
    return any(address in network for network in _allowed_networks())


@never_cache
@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    if not _metrics_allowed(request):
        return HttpResponse("Not found.", status=404, content_type="text/plain")
    return ExportToDjangoView(request)
