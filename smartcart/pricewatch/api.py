"""The price watch on the API's cart resource: the ``price_watch`` field, through
storefront's hook (``settings.STOREFRONT_CART_API_FIELDS``, ``storefront.api.cart_fields``)."""

from typing import Any

from rest_framework import serializers

from smartcart.pricewatch.selectors import price_watch_notice_for_cart
from storefront.models import Cart


class PriceWatchSerializer(serializers.Serializer):
    """Prices changed since the cart was last looked at: what it can save now (apply it with
    ``POST cart/optimizations/{optimization_id}/apply/``, the usual 409 rules) and how much
    its lines rose since they were added."""

    optimization_id = serializers.IntegerField()
    cart_version = serializers.IntegerField()
    current_total = serializers.IntegerField()
    suggested_total = serializers.IntegerField()
    savings = serializers.IntegerField(help_text="In cents; 0 when only prices rose.")
    price_increase = serializers.IntegerField(
        help_text="How much more the cart's lines cost now than when added, in cents."
    )
    created_at = serializers.DateTimeField()


class PriceWatchCartFields:
    """The ``price_watch`` field of the cart resource (storefront's cart API fields hook)."""

    def __call__(self, *, cart: Cart) -> dict[str, Any]:
        """The cart's current notice, or ``None`` (one query)."""
        notice = price_watch_notice_for_cart(cart=cart)
        return {
            "price_watch": None if notice is None else PriceWatchSerializer(notice.as_dict()).data
        }

    def schema_fields(self) -> dict[str, serializers.Field]:
        return {
            "price_watch": PriceWatchSerializer(
                allow_null=True,
                help_text="Prices changed: what the cart can save now, or null.",
            )
        }


price_watch_cart_fields = PriceWatchCartFields()
