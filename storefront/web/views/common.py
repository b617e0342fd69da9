"""Small helpers shared by the shopper views."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme


def safe_next(request: HttpRequest, candidate: str | None, *, fallback: str) -> str:
    """``candidate`` if it is a local URL of this site, else ``fallback`` (no open redirect)."""
    if candidate and url_has_allowed_host_and_scheme(
        candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return candidate
    return fallback


def cart_url(anchor: str = "") -> str:
    return reverse("cart") + (f"#{anchor}" if anchor else "")


def render_problem(
    request: HttpRequest, *, title: str, message: str, status: int, back_url: str | None = None
) -> HttpResponse:
    """A plain page for input no form on the site can produce (a hand-made POST)."""
    context = {"title": title, "message": message, "back_url": back_url or reverse("catalog")}
    return render(request, "web/problem.html", context, status=status)
