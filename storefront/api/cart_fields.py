"""The API cart resource's extension point: fields other apps add to it, without storefront
importing them (as ``storefront.web.cart_panels`` is for the cart page).

``settings.STOREFRONT_CART_API_FIELDS`` lists providers by dotted path, loaded with
``import_string``; each is called for the cart every cart response shows::

    def provider(*, cart: Cart) -> Mapping[str, Any]: ...

and returns JSON-ready fields, merged into the response in the providers' order (a provider
must not reuse a name the cart serializer has). Providers only read.
"""

from collections.abc import Mapping
from functools import cache
from typing import Any, Protocol

from django.conf import settings
from django.utils.module_loading import import_string

from storefront.models import Cart


class CartFieldsProvider(Protocol):
    def __call__(self, *, cart: Cart) -> Mapping[str, Any]: ...


@cache
def _providers(paths: tuple[str, ...]) -> tuple[CartFieldsProvider, ...]:
    return tuple(import_string(path) for path in paths)


def cart_api_fields(*, cart: Cart) -> dict[str, Any]:
    """Every configured provider's fields for ``cart`` (none configured: none)."""
    fields: dict[str, Any] = {}
    for provider in _providers(tuple(getattr(settings, "STOREFRONT_CART_API_FIELDS", ()))):
        fields.update(provider(cart=cart))
    return fields
