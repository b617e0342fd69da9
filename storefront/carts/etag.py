"""ETag / If-Match / If-None-Match for the cart API, so two devices editing one cart never
overwrite each other's edits silently.

The ETag is ``"<cart version>-<digest of the priced cart>"``: the version names the edit the
client saw, the digest the answer as a whole (prices may move without an edit).

- Every answer that carries the cart carries its ``ETag`` (a 204 too: the cart after it).
- ``If-Match`` on a write (POST, PUT, PATCH, DELETE) compares the cart version (``*``: any
  cart): a stale one answers 412 (the API's error body, with the cart as it is now under
  ``cart``, and its ``ETag``), and nothing is written. The check and the write hold the
  cart's row lock together.
- ``If-None-Match`` on a GET answers 304 when the cart, priced now, is unchanged.
"""

import functools
import hashlib
from collections.abc import Callable

from django.db import transaction
from rest_framework import status
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from storefront.carts.selectors import cart_find
from storefront.models import Cart

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def cart_etag(data: dict) -> str:
    digest = hashlib.sha256(JSONRenderer().render(data)).hexdigest()[:16]
    return f'"{data["version"]}-{digest}"'


def _tags(header: str) -> list[str]:
    return [tag.strip().removeprefix("W/").strip('"') for tag in header.split(",") if tag.strip()]


def _version_matches(header: str, cart: Cart | None) -> bool:
    tags = _tags(header)
    if "*" in tags:
        return cart is not None
    return cart is not None and any(tag.split("-", 1)[0] == str(cart.version) for tag in tags)


def cart_preconditions(*, current: Callable[[Cart], dict]):
    """Decorates a cart ``APIView`` method; ``current(cart)`` is the cart's API body."""

    def decorate(method):
        @functools.wraps(method)
        def wrapper(view, request, *args, **kwargs):
            if_match = request.headers.get("If-Match")
            if if_match is None or request.method in SAFE_METHODS:
                response = method(view, request, *args, **kwargs)
            else:
                with transaction.atomic():
                    cart = cart_find(user=request.user)
                    if cart is not None:
                        cart = Cart.objects.select_for_update().get(pk=cart.pk)
                    if not _version_matches(if_match, cart):
                        return _precondition_failed(cart, current)
                    response = method(view, request, *args, **kwargs)
            return _with_etag(request, response, current)

        return wrapper

    return decorate


def _error(message: str) -> dict:
    return {"error": {"code": "precondition_failed", "message": message, "field": "If-Match"}}


def _precondition_failed(cart: Cart | None, current: Callable[[Cart], dict]) -> Response:
    """The API's error body, with the cart as it is now under ``cart`` and its ETag."""
    if cart is None:
        body = _error("If-Match names a cart, but you have none.")
        return Response(body, status=status.HTTP_412_PRECONDITION_FAILED)
    data = current(cart)
    body = {
        **_error(
            "Your cart changed since you last saw it (another device?). Nothing was "
            "changed; here is the cart as it is now."
        ),
        "cart": data,
    }
    return Response(
        body, status=status.HTTP_412_PRECONDITION_FAILED, headers={"ETag": cart_etag(data)}
    )


def _with_etag(request, response: Response, current: Callable[[Cart], dict]) -> Response:
    data = response.data
    etag: str | None
    if isinstance(data, dict) and "version" in data and 200 <= response.status_code < 300:
        etag = cart_etag(data)
    elif response.status_code == status.HTTP_204_NO_CONTENT:
        cart = cart_find(user=request.user)
        etag = None if cart is None else cart_etag(current(cart))
    else:
        return response
    if etag is None:
        return response
    if request.method in SAFE_METHODS and etag.strip('"') in _tags(
        request.headers.get("If-None-Match", "")
    ):
        return Response(status=status.HTTP_304_NOT_MODIFIED, headers={"ETag": etag})
    response["ETag"] = etag
    return response
