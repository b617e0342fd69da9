"""The price watch on the API: the cart resource's ``price_watch`` field, through
storefront's hook (``settings.STOREFRONT_CART_API_FIELDS``, ``storefront.api.cart_fields``),
and the signed-in shopper's e-mail opt-in (``GET``/``PUT cart/price-watch/``)."""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from smartcart.pricewatch.notify import price_watch_email_enabled, price_watch_email_set
from smartcart.pricewatch.selectors import price_watch_notice_for_cart
from storefront.api.errors import error_responses
from storefront.api.inputs import json_body
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
        """The cart's current notice at today's prices, or ``None`` (one query, three with a
        notice)."""
        notice = price_watch_notice_for_cart(cart=cart)
        if notice is None or notice.checking:  # prices moved again: the next check tells
            return {"price_watch": None}
        return {"price_watch": PriceWatchSerializer(notice.as_dict()).data}

    def schema_fields(self) -> dict[str, serializers.Field]:
        return {
            "price_watch": PriceWatchSerializer(
                allow_null=True,
                help_text="Prices changed: what the cart can save now, or null.",
            )
        }


price_watch_cart_fields = PriceWatchCartFields()


class PriceWatchEmailSerializer(serializers.Serializer):
    email = serializers.BooleanField(
        help_text="E-mail me when prices move so that my cart can cost less (at most once a "
        "day per cart, with an unsubscribe link)."
    )


class PriceWatchSettingsView(APIView):
    """The signed-in shopper's price-watch e-mail: read it, turn it on or off."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        tags=["cart"],
        summary="Your price-watch e-mail setting",
        responses={200: PriceWatchEmailSerializer, **error_responses(401, 403, 429)},
    )
    def get(self, request):
        return Response({"email": price_watch_email_enabled(user=request.user)})

    @extend_schema(
        tags=["cart"],
        summary="Turn the price-watch e-mail on or off",
        request=json_body(PriceWatchEmailSerializer),
        responses={200: PriceWatchEmailSerializer, **error_responses(400, 401, 403, 415, 429)},
    )
    def put(self, request):
        serializer = PriceWatchEmailSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        opt_in = price_watch_email_set(
            user=request.user,
            enabled=serializer.validated_data["email"],
            site_url=request.build_absolute_uri("/"),
        )
        return Response({"email": opt_in.enabled})
