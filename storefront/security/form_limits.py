"""Limits on the shop's anonymous forms that an automated client could repeat: signing in,
creating accounts and guessing guest orders. Each submission (POST) counts against the
client's address (``storefront.security.client_ip``) and, for the order lookup, against the
order number asked for too, so neither many addresses on one order nor one address on many
orders gets far.

The rates are settings (``LOGIN_RATE``, ``SIGNUP_RATE``, ``ORDER_LOOKUP_RATE``,
``ORDER_LOOKUP_NUMBER_RATE``, e.g. ``"10/hour"``; empty: no limit), counted in the shared cache by
``storefront.security.ratelimit.window_retry_after``. Past a limit the form answers 429 with
``Retry-After`` and a page that says how long to wait.
"""

import functools
import hashlib
import math
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from storefront.security.client_ip import client_ip
from storefront.security.ratelimit import parse_rate, window_retry_after

Ident = Callable[[HttpRequest], str | None]


def _by_client(request: HttpRequest) -> str:
    return f"client:{client_ip(request)}"


def _by_order_number(request: HttpRequest) -> str | None:
    number = (request.POST.get("number") or "").strip().upper()
    return f"order:{number}" if number else None


def form_retry_after(*, request: HttpRequest, name: str, limits: dict[str, Ident]) -> int | None:
    """Counts this submission once under each limit (``{setting name: ident}``); the longest
    wait among those used up, else None."""
    waits = []
    for setting, ident_of in limits.items():
        rate = parse_rate(getattr(settings, setting, ""))
        ident = ident_of(request)
        if rate is None or ident is None:
            continue
        allowed, window_s = rate
        # Hashed: addresses and typed-in values are not safe cache keys as they are.
        digest = hashlib.sha256(ident.encode()).hexdigest()[:32]
        retry_after = window_retry_after(
            key=f"storefront:form:{name}:{setting}:{digest}",
            allowed=allowed,
            window_s=window_s,
            # Redis down: counted per web process, so the forms keep working and stay bounded.
            on_outage="local",
        )
        if retry_after is not None:
            waits.append(retry_after)
    return max(waits, default=None)


def too_often_response(*, request: HttpRequest, retry_after: int, message: str) -> HttpResponse:
    minutes = max(1, math.ceil(retry_after / 60))
    context = {"message": message, "retry_after_minutes": minutes}
    response = render(request, "registration/too_often.html", context, status=429)
    response["Retry-After"] = str(retry_after)
    return response


def _post_rate_limited(*, name: str, limits: dict[str, Ident], message: str):
    def decorator(view):
        @functools.wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if request.method == "POST":
                retry_after = form_retry_after(request=request, name=name, limits=limits)
                if retry_after is not None:
                    return too_often_response(
                        request=request, retry_after=retry_after, message=message
                    )
            return view(request, *args, **kwargs)

        return wrapper

    return decorator


# Sign-in attempts per address: a throttle (a short window), not django-axes' lockout, which
# counts per account. It bounds how fast one address can try passwords across many accounts
# without locking the other people behind a shared address out for long.
login_rate_limited = _post_rate_limited(
    name="login",
    limits={"LOGIN_RATE": _by_client},
    message="Too many sign-in attempts from your connection.",
)

signup_rate_limited = _post_rate_limited(
    name="signup",
    limits={"SIGNUP_RATE": _by_client},
    message="Too many accounts were created from your connection.",
)

order_lookup_rate_limited = _post_rate_limited(
    name="order-lookup",
    limits={"ORDER_LOOKUP_RATE": _by_client, "ORDER_LOOKUP_NUMBER_RATE": _by_order_number},
    message="Too many order searches from your connection or for this order number.",
)
