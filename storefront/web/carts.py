"""The cart of the request: the signed-in user's, else the anonymous session's.

Django's ``login()`` gives the session a new key, so an anonymous cart cannot be found by
its ``session_key`` afterwards. Its id is therefore also kept in the session data (which
survives the key change), and ``storefront.web.signals`` merges it into the user's cart.
"""

from weakref import WeakKeyDictionary

from django.http import HttpRequest

from storefront.carts.selectors import cart_find
from storefront.carts.services import cart_get_or_create
from storefront.models import Cart

ANONYMOUS_CART_SESSION_KEY = "web_anonymous_cart_id"
# The request's cart once looked up (None: it has none), for the rest of the request.
_request_carts: WeakKeyDictionary[HttpRequest, Cart | None] = WeakKeyDictionary()


def request_cart_find(request: HttpRequest) -> Cart | None:
    """The request's cart if it has one; never writes (safe for GET pages)."""
    if request in _request_carts:
        return _request_carts[request]
    cart = cart_find(user=request.user, session_key=request.session.session_key)
    _request_carts[request] = cart
    return cart


def request_cart_get_or_create(request: HttpRequest) -> Cart:
    """The request's cart, created (and the session started) when missing."""
    cart = request_cart_find(request)
    if cart is not None:
        return cart
    if request.user.is_authenticated:
        cart = cart_get_or_create(user=request.user)
    else:
        if not request.session.session_key:
            request.session.create()
        cart = cart_get_or_create(session_key=request.session.session_key)
        request.session[ANONYMOUS_CART_SESSION_KEY] = cart.pk
    _request_carts[request] = cart
    return cart


def anonymous_cart_pop(request: HttpRequest) -> Cart | None:
    """Takes the anonymous cart remembered in the session (once) if it still exists and is
    still anonymous."""
    cart_id = request.session.pop(ANONYMOUS_CART_SESSION_KEY, None)
    if cart_id is None:
        return None
    return Cart.objects.filter(pk=cart_id, owner__isnull=True).first()


def request_cart_forget(request: HttpRequest) -> None:
    """Drops the per-request memo, e.g. after login switched the request to another cart."""
    _request_carts.pop(request, None)
