"""The API cart resource's extension point: fields other apps add to it, without storefront
importing them (as ``storefront.web.cart_panels`` is for the cart page).

``settings.STOREFRONT_CART_API_FIELDS`` lists providers by dotted path, loaded with
``import_string``; each is called for the cart every cart response shows::

    def provider(*, cart: Cart) -> Mapping[str, Any]: ...

and returns JSON-ready fields, merged into the response in the providers' order (a provider
must not reuse a name the cart serializer has). Providers only read. A provider documents its
fields in the OpenAPI schema with a ``schema_fields()`` method returning
``{name: serializer field}``: ``cart_resource_serializer(CartSerializer)`` is the cart
serializer with those fields added (the ``CartResource`` component: the cart endpoints' bodies; the
checkout review's ``cart`` is the plain ``Cart``, without them).
"""

from collections.abc import Mapping
from functools import cache
from typing import Any, Protocol

from django.conf import settings
from django.utils.module_loading import import_string
from rest_framework import serializers

from storefront.models import Cart


class CartFieldsProvider(Protocol):
    def __call__(self, *, cart: Cart) -> Mapping[str, Any]: ...


def _paths() -> tuple[str, ...]:
    return tuple(getattr(settings, "STOREFRONT_CART_API_FIELDS", ()))


@cache
def _providers(paths: tuple[str, ...]) -> tuple[CartFieldsProvider, ...]:
    return tuple(import_string(path) for path in paths)


def cart_api_fields(*, cart: Cart) -> dict[str, Any]:
    """Every configured provider's fields for ``cart`` (none configured: none)."""
    fields: dict[str, Any] = {}
    for provider in _providers(_paths()):
        fields.update(provider(cart=cart))
    return fields


@cache
def _resource_serializer(
    cart_serializer: type[serializers.Serializer], paths: tuple[str, ...]
) -> type[serializers.Serializer]:
    declared: dict[str, serializers.Field] = {}
    for provider in _providers(paths):
        schema_fields = getattr(provider, "schema_fields", None)
        if schema_fields is not None:
            declared.update(schema_fields())
    clash = set(declared) & set(cart_serializer().fields)
    if clash:
        raise ValueError(f"cart API fields reuse the cart serializer's names: {sorted(clash)}")
    resource = type(
        "CartResourceSerializer",
        (cart_serializer,),
        {"__module__": __name__, "__doc__": cart_serializer.__doc__, **declared},
    )
    return resource


def cart_resource_serializer(
    cart_serializer: type[serializers.Serializer],
) -> type[serializers.Serializer]:
    """The API's cart as responses hold it, for the schema: ``cart_serializer`` (the cart API's
    ``CartSerializer``, passed in so that this module imports no feature's API) and every
    provider's ``schema_fields()`` (the body itself is ``CartSerializer``'s data merged with
    ``cart_api_fields``)."""
    return _resource_serializer(cart_serializer, _paths())
