"""The cart API: the caller's own cart, create/get, lines, destination. Signed-in callers
only; any id that is not in the caller's cart is a 404, never a hint that it exists
elsewhere."""

from typing import Any

from django.utils.text import capfirst
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_serializer,
)
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from storefront.api.cart_fields import cart_api_fields, cart_resource_serializer
from storefront.api.errors import error_responses
from storefront.api.inputs import TextField, json_body, validated
from storefront.api.parcels import LinesParcelSerializer
from storefront.carts.etag import cart_preconditions
from storefront.carts.pricing_summary import (
    CartPricingSummary,
    LinePricing,
    cart_pricing_summary,
)
from storefront.carts.selectors import cart_find
from storefront.carts.services import (
    cart_destination_set,
    cart_get_or_create,
    cart_line_add,
    cart_line_remove,
    cart_line_set_quantity,
)
from storefront.catalog.selectors import offer_get
from storefront.errors import NotFound, ValidationFailed
from storefront.models import MAX_LINE_QUANTITY, Cart
from storefront.security.idempotency import IDEMPOTENCY_KEY_PARAMETER, idempotent

# --- serializers --------------------------------------------------------------------------


class CartLineSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="line_id")
    product_id = serializers.IntegerField()
    product_name = serializers.CharField(source="line.product.name")
    offer_id = serializers.IntegerField()
    merchant_id = serializers.IntegerField()
    merchant_name = serializers.CharField(source="line.offer.merchant.name")
    quantity = serializers.IntegerField()
    unit_price = serializers.IntegerField(help_text="The offer's price now, in cents.")
    unit_price_snapshot = serializers.IntegerField(help_text="The price when added, in cents.")
    price_changed = serializers.BooleanField()
    line_total = serializers.IntegerField()
    available = serializers.BooleanField()
    warehouse_id = serializers.IntegerField(
        allow_null=True,
        help_text="The merchant's warehouse the line ships from; null when the merchant has "
        "no warehouses (or the line cannot be bought now).",
    )
    warehouse_name = serializers.CharField(allow_blank=True)
    problem = serializers.CharField(
        allow_null=True,
        help_text="Why the line cannot be bought now: offer_inactive, merchant_inactive, "
        "insufficient_stock; null when it can.",
    )
    max_quantity = serializers.IntegerField(
        allow_null=True,
        help_text="The most units this line can have from its offer now; null: unlimited. For "
        "a merchant with warehouses it is the most one warehouse that ships to the cart's "
        "postal code holds, never their sum: a line ships whole from one warehouse.",
    )
    stock_note = serializers.SerializerMethodField(
        help_text="With insufficient_stock, what the shop's pages say, e.g. \"Only 2 can ship "
        'from one warehouse of Acme"; null otherwise.'
    )

    def get_stock_note(self, line: LinePricing) -> str | None:
        if line.problem != "insufficient_stock":
            return None
        return capfirst(line.stock_note)


class CartMerchantSerializer(serializers.Serializer):
    merchant_id = serializers.IntegerField()
    merchant_name = serializers.CharField()
    line_ids = serializers.SerializerMethodField()
    units = serializers.IntegerField()
    subtotal = serializers.IntegerField()
    discount = serializers.IntegerField()
    shipping = serializers.IntegerField()
    total = serializers.IntegerField()
    missing_for_free_shipping = serializers.IntegerField(
        allow_null=True, help_text="Goods to add for free shipping; null: never free."
    )
    parcels = LinesParcelSerializer(
        many=True, help_text="Its parcels: one a warehouse that ships something."
    )

    def get_line_ids(self, group) -> list[int]:
        return [line.line_id for line in group.lines]


class CartSerializer(serializers.Serializer):
    """The cart priced now, by the pricing contract, grouped by merchant."""

    id = serializers.IntegerField(source="cart_id")
    version = serializers.IntegerField(
        help_text="Grows with every change; an optimization is for one version."
    )
    postal_code = serializers.CharField()
    currency = serializers.CharField()
    lines = serializers.SerializerMethodField()
    merchants = CartMerchantSerializer(source="groups", many=True)
    subtotal = serializers.IntegerField()
    discount = serializers.IntegerField()
    shipping = serializers.IntegerField()
    total = serializers.IntegerField(help_text="What the buyable lines cost now, in cents.")
    units = serializers.IntegerField()

    def get_lines(self, summary: CartPricingSummary) -> list[dict[str, Any]]:
        lines: list[LinePricing] = [line for group in summary.groups for line in group.lines]
        lines += list(summary.unavailable)
        lines.sort(key=lambda line: (line.line.created_at, line.line_id))
        # many=True gives a ReturnList; the stubs type every serializer's .data as ReturnDict.
        return CartLineSerializer(lines, many=True).data  # type: ignore[return-value]


# --- views ----------------------------------------------------------------------------------


def no_cart() -> NotFound:
    return NotFound(
        "You have no cart yet: POST /api/v1/cart/ or add a line to create it.",
        code="cart_not_found",
        field="cart",
    )


def own_cart(request) -> Cart:
    """The caller's cart; ``NotFound`` when they have none yet (GETs never create one)."""
    cart = cart_find(user=request.user)
    if cart is None:
        raise no_cart()
    return cart


CartResource = cart_resource_serializer(CartSerializer)


def cart_response(cart: Cart, *, status_code: int = status.HTTP_200_OK) -> Response:
    return Response(cart_data(cart), status=status_code)


def cart_data(cart: Cart) -> dict:
    """The cart's API body: the serializer's fields and the other apps'
    (``STOREFRONT_CART_API_FIELDS``), so the ETag covers both."""
    data = dict(CartSerializer(cart_pricing_summary(cart=cart)).data)
    data.update(cart_api_fields(cart=cart))
    return data


# ETag on every cart answer, If-Match on writes (412), If-None-Match on reads (304).
etag_checked = cart_preconditions(current=cart_data)
IF_MATCH = OpenApiParameter(
    name="If-Match",
    type=OpenApiTypes.STR,
    location=OpenApiParameter.HEADER,
    required=False,
    description="The cart's `ETag` as you last saw it: when the cart changed since, nothing "
    "is written and the answer is 412 with the cart as it is now.",
)
IF_NONE_MATCH = OpenApiParameter(
    name="If-None-Match",
    type=OpenApiTypes.STR,
    location=OpenApiParameter.HEADER,
    required=False,
    description="The cart's `ETag`: 304 with no body when the cart is unchanged.",
)
STALE = error_responses(412)


class CartBaseView(APIView):
    permission_classes = [IsAuthenticated]


class CartView(CartBaseView):
    @extend_schema(
        tags=["cart"],
        summary="Your cart, priced now",
        parameters=[IF_NONE_MATCH],
        responses={
            200: CartResource,
            304: OpenApiResponse(description="Unchanged since the `ETag` you sent."),
            **error_responses(401, 403, 404, 429),
        },
    )
    @etag_checked
    def get(self, request):
        return cart_response(own_cart(request))

    @extend_schema(
        tags=["cart"],
        summary="Create your cart (or get the one you have)",
        request=None,
        parameters=[IF_MATCH],
        responses={
            201: OpenApiResponse(CartResource, description="Created."),
            200: OpenApiResponse(CartResource, description="You already had one."),
            **STALE,
            **error_responses(401, 403, 429),
        },
    )
    @etag_checked
    def post(self, request):
        existing = cart_find(user=request.user)
        cart = existing or cart_get_or_create(user=request.user)
        code = status.HTTP_200_OK if existing else status.HTTP_201_CREATED
        return cart_response(cart, status_code=code)


class CartLineListView(CartBaseView):
    @extend_schema_serializer(component_name="CartLineAdd")
    class InputSerializer(serializers.Serializer):
        offer_id = serializers.IntegerField(min_value=1)
        quantity = serializers.IntegerField(min_value=1, max_value=MAX_LINE_QUANTITY, default=1)

    @extend_schema(
        tags=["cart"],
        summary="Add an offer to your cart",
        description="Creates your cart when you have none. A product already in the cart "
        "grows by `quantity` and moves to this offer.",
        parameters=[IDEMPOTENCY_KEY_PARAMETER, IF_MATCH],
        request=json_body(InputSerializer),
        responses={
            201: OpenApiResponse(CartResource, description="The cart with the line."),
            **STALE,
            **error_responses(
                400,
                401,
                403,
                409,
                415,
                422,
                429,
                e400="Bad input, or `offer_not_found` (field `offer_id`) for an unknown offer.",
                e409="`offer_inactive`, `insufficient_stock` or `cart_full`.",
            ),
        },
    )
    @idempotent
    @etag_checked
    def post(self, request):
        data = validated(self.InputSerializer, request.data)
        try:
            offer = offer_get(offer_id=data["offer_id"])
        except NotFound:
            raise ValidationFailed(
                f"There is no offer {data['offer_id']}.", code="offer_not_found", field="offer_id"
            ) from None
        cart = cart_get_or_create(user=request.user)
        cart_line_add(cart=cart, offer=offer, quantity=data["quantity"])
        return cart_response(cart, status_code=status.HTTP_201_CREATED)


class CartLineDetailView(CartBaseView):
    @extend_schema_serializer(component_name="CartLineQuantity")
    class InputSerializer(serializers.Serializer):
        quantity = serializers.IntegerField(
            required=False,
            min_value=1,
            max_value=MAX_LINE_QUANTITY,
            help_text="Use DELETE to remove the line. Absent: the line is left as it is.",
        )

    @extend_schema(
        tags=["cart"],
        summary="Change a line's quantity",
        parameters=[IF_MATCH],
        request=json_body(InputSerializer),
        responses={
            200: CartResource,
            **STALE,
            **error_responses(
                400, 401, 403, 404, 409, 415, 429, e409="`offer_inactive` or `insufficient_stock`."
            ),
        },
    )
    @etag_checked
    def patch(self, request, line_id: int):
        data = validated(self.InputSerializer, request.data)
        cart = own_cart(request)
        if "quantity" in data:
            cart_line_set_quantity(cart=cart, line_id=line_id, quantity=data["quantity"])
        elif not cart.lines.filter(pk=line_id).exists():
            raise NotFound(
                "This line is not in your cart.", code="cart_line_not_found", field="line_id"
            )
        return cart_response(cart)

    @extend_schema(
        tags=["cart"],
        summary="Remove a line",
        request=None,
        parameters=[IF_MATCH],
        responses={204: None, **STALE, **error_responses(401, 403, 404, 429)},
    )
    @etag_checked
    def delete(self, request, line_id: int):
        cart_line_remove(cart=own_cart(request), line_id=line_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class CartDestinationView(CartBaseView):
    @extend_schema_serializer(component_name="CartDestination")
    class InputSerializer(serializers.Serializer):
        postal_code = TextField(
            max_length=20, allow_blank=True, allow_null=True, help_text="Empty or null clears it."
        )

    @extend_schema(
        tags=["cart"],
        summary="Set where your cart ships",
        description="Selects each merchant's shipping zone (the longest matching postal "
        "prefix). Creates your cart when you have none.",
        parameters=[IF_MATCH],
        request=json_body(InputSerializer),
        responses={
            200: CartResource,
            **STALE,
            **error_responses(400, 401, 403, 415, 429),
        },
    )
    @etag_checked
    def put(self, request):
        data = validated(self.InputSerializer, request.data)
        cart = cart_get_or_create(user=request.user)
        cart_destination_set(cart=cart, postal_code=data["postal_code"])
        return cart_response(cart)
