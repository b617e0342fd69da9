"""Checkout and orders for mobile clients: review the cart, place it (``Idempotency-Key``:
a retry with the same body replays the first answer, another body is a 422),
pay (the configured provider's form fields; the dummy provider's in demos and tests), list
and read orders, cancel an order or a package not shipped yet (refunded through the payment
ledger when paid). Signed-in callers only; another shopper's order is a 404."""

from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
)
from payments import RedirectNeeded
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from storefront.api.errors import error_responses
from storefront.api.inputs import TextField, json_body, validated
from storefront.api.parcels import ParcelSerializer
from storefront.carts.apis import CartSerializer, own_cart
from storefront.carts.services import cart_destination_set
from storefront.checkout.address import shipping_address_validate
from storefront.checkout.ratelimit import order_place_rate_limited
from storefront.checkout.services import checkout_review_prepare, order_place
from storefront.errors import ValidationFailed
from storefront.models import Order
from storefront.orders.selectors import order_get, order_list
from storefront.orders.services import merchant_order_cancel_by_shopper, order_cancel
from storefront.payments.services import order_payment_for
from storefront.security.idempotency import idempotency_key_parameter, idempotent

SIGNED_IN_ONLY = (
    "Signed-in callers only (`Authorization: Token ...` or the site's session), like the cart "
    "API: a mobile client signs in before checkout. Guest checkout (number plus e-mail to find "
    "the order again) is on the web pages only."
)

# --- serializers ----------------------------------------------------------------------------


class CheapestSuggestionSerializer(serializers.Serializer):
    run_id = serializers.IntegerField(help_text="Apply with POST /cart/optimizations/{id}/apply/.")
    current_total = serializers.IntegerField()
    cheaper_total = serializers.IntegerField()
    savings = serializers.IntegerField()


class OrderLineSerializer(serializers.Serializer):
    product_name = serializers.CharField()
    warehouse_id = serializers.IntegerField(
        allow_null=True, help_text="The warehouse it ships from; null: the merchant itself."
    )
    gtin = serializers.CharField()
    merchant_sku = serializers.CharField()
    unit_price = serializers.IntegerField()
    quantity = serializers.IntegerField()
    line_total = serializers.IntegerField()


class MerchantOrderSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="Cancel with POST .../packages/{id}/cancel/.")
    merchant_id = serializers.IntegerField()
    merchant_name = serializers.CharField()
    status = serializers.CharField()
    tracking_reference = serializers.CharField()
    cancel_reason = serializers.CharField()
    subtotal = serializers.IntegerField()
    discount = serializers.IntegerField()
    shipping = serializers.IntegerField()
    cost = serializers.IntegerField()
    parcels = serializers.SerializerMethodField()
    lines = OrderLineSerializer(many=True, source="lines.all")

    @extend_schema_field(ParcelSerializer(many=True))
    def get_parcels(self, package) -> list[dict]:
        """The parcels as placed (orders placed before parcels were kept have none)."""
        fields = ParcelSerializer().fields
        return [{name: parcel[name] for name in fields} for parcel in package.parcels]


class OrderSerializer(serializers.Serializer):
    number = serializers.CharField()
    status = serializers.CharField()
    email = serializers.EmailField()
    full_name = serializers.CharField()
    address_line = serializers.CharField()
    city = serializers.CharField()
    postal_code = serializers.CharField()
    country = serializers.CharField()
    currency = serializers.CharField()
    subtotal = serializers.IntegerField()
    discount = serializers.IntegerField()
    shipping = serializers.IntegerField()
    total = serializers.IntegerField(help_text="As placed, cancelled packages included.")
    amount_due = serializers.IntegerField(help_text="The packages not cancelled: what is paid.")
    amount_captured = serializers.IntegerField(help_text="Charged by the payment provider.")
    amount_refunded = serializers.IntegerField(help_text="Given back by the payment provider.")
    placed_at = serializers.DateTimeField()
    packages = MerchantOrderSerializer(many=True, source="merchant_orders.all")


# --- views ----------------------------------------------------------------------------------


def _own_order(request, number: str) -> Order:
    return order_get(number=number, user=request.user)


class CheckoutReviewView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema_serializer(component_name="CheckoutReviewRequest")
    class InputSerializer(serializers.Serializer):
        postal_code = TextField(
            max_length=10, required=False, help_text="Re-prices the cart for it first."
        )

    @extend_schema_serializer(component_name="CheckoutReview")
    class OutputSerializer(serializers.Serializer):
        cart = CartSerializer()
        review_token = serializers.CharField(help_text="Send it back to place the order.")
        cheaper = CheapestSuggestionSerializer(allow_null=True)

    @extend_schema(
        tags=["checkout"],
        summary="Review your cart for checkout (and look once more for a cheaper one)",
        description=SIGNED_IN_ONLY,
        request=json_body(InputSerializer),
        responses={200: OutputSerializer, **error_responses(400, 401, 403, 404, 409)},
    )
    def post(self, request):
        data = validated(self.InputSerializer, request.data)
        cart = own_cart(request)
        if "postal_code" in data:
            cart = cart_destination_set(cart=cart, postal_code=data["postal_code"])
        review = checkout_review_prepare(cart=cart)
        body = {
            "cart": review.summary,
            "review_token": review.review_token,
            "cheaper": review.cheaper,
        }
        return Response(self.OutputSerializer(body).data)


class OrderListView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema_serializer(component_name="PlaceOrder")
    class InputSerializer(serializers.Serializer):
        # Checked by placing the order, whose code says what to do: review_token_missing
        # (review first), review_token_invalid, review_expired, review_cart_merged.
        review_token = TextField(max_length=4000, required=False, allow_blank=True, default="")
        email = serializers.EmailField(max_length=254)
        full_name = TextField(max_length=120)
        address_line = TextField(max_length=200)
        city = TextField(max_length=100)
        postal_code = TextField(max_length=10)
        country = TextField(min_length=2, max_length=2)

    @extend_schema(
        tags=["orders"],
        summary="Your orders, newest first",
        responses={200: OrderSerializer(many=True), **error_responses(401, 403)},
    )
    def get(self, request):
        return Response(OrderSerializer(order_list(user=request.user)[:100], many=True).data)

    @extend_schema(
        tags=["orders"],
        summary="Place the reviewed cart as an order (one package per merchant)",
        description=SIGNED_IN_ONLY,
        parameters=[
            idempotency_key_parameter(
                required=True,
                rule="8 to 100 letters, digits or '_.:-'",
                min_length=8,
                max_length=100,
                pattern="^[A-Za-z0-9_.:-]+$",
            )
        ],
        request=json_body(InputSerializer),
        responses={
            201: OpenApiResponse(OrderSerializer, description="Placed: pay it next."),
            **error_responses(
                400,
                401,
                403,
                404,
                409,
                422,
                429,
                e400="Bad input: an address field, the `Idempotency-Key` header, or the "
                "review token (`review_token_missing`: review first; `review_token_invalid`).",
                e409="Nothing was ordered; review again. `checkout_changed`: the cart changed "
                "since the review (a line sold out or repriced, a line ships from another "
                "warehouse (`warehouse_changed`, even at the same total), new terms or parcel "
                "fees, another edit): `details.changes` says what, `details.total` is the new "
                "total. `cart_empty`: "
                "nothing left to order (placed with another key?). `review_expired`: the "
                "review is over an hour old.",
                e422="`idempotency_key_reused`: this `Idempotency-Key` placed an order (or "
                "answered another request) with a different body: nothing was ordered; send a "
                "new key for a new order.",
                e429="Too many orders placed by this account: retry after `Retry-After` "
                "seconds (`ORDER_PLACE_THROTTLE_RATE`).",
            ),
        },
    )
    @order_place_rate_limited
    @idempotent
    def post(self, request):
        data = validated(self.InputSerializer, request.data)
        key = request.headers.get("Idempotency-Key")
        if not key:
            raise ValidationFailed(
                "Send an Idempotency-Key header.",
                code="idempotency_key_missing",
                field="Idempotency-Key",
            )
        token = data.pop("review_token")
        address = shipping_address_validate(**data)
        order = order_place(
            cart=own_cart(request),
            user=request.user,
            address=address,
            review_token=token,
            idempotency_key=key,
        )
        order = _own_order(request, order.number)
        return Response(OrderSerializer(order).data, status=status.HTTP_201_CREATED)


class OrderDetailView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        tags=["orders"],
        summary="One of your orders, with each package's status",
        responses={200: OrderSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request, number: str):
        return Response(OrderSerializer(_own_order(request, number)).data)


class OrderPaymentView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema_serializer(component_name="PaymentRequest")
    class InputSerializer(serializers.Serializer):
        """The provider form's fields. Dummy provider: ``status`` (``confirmed`` or
        ``rejected``), ``fraud_status`` (``accept``), ``gateway_response`` (``3ds-disabled``)."""

        status = serializers.CharField(required=False)
        fraud_status = serializers.CharField(required=False)
        gateway_response = serializers.CharField(required=False)

    @extend_schema(
        tags=["orders"],
        summary="Pay an order through the configured provider's form",
        description=SIGNED_IN_ONLY,
        request=json_body(InputSerializer),
        responses={200: OrderSerializer, **error_responses(400, 401, 403, 404, 409)},
    )
    def post(self, request, number: str):
        order = _own_order(request, number)
        if order.status != Order.Status.PENDING:
            raise ValidationFailed(
                f"This order is {order.get_status_display().lower()}: nothing to pay.",
                code="order_not_pending",
                field="number",
            )
        try:
            form = order_payment_for(order=order).get_form(data=request.data)
        except RedirectNeeded:
            return Response(OrderSerializer(_own_order(request, number)).data)
        field, errors = next(iter(form.errors.items()), (None, ["Invalid payment data."]))
        raise ValidationFailed(
            str(errors[0]), code="payment_invalid", field=None if field == "__all__" else field
        )


_CANCEL_409 = (
    "`package_shipped`: a package is with the carrier already; `order_not_cancellable`: the "
    "order is failed or cancelled already; `package_cancelled`: cancelled already."
)


class OrderCancelView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        tags=["orders"],
        summary="Cancel one of your orders (unpaid, or paid with nothing shipped yet)",
        description="Every package is cancelled and its stock returned; what was paid is "
        "refunded (one refund per package, made by the payment provider shortly after).",
        request=None,
        responses={200: OrderSerializer, **error_responses(401, 403, 404, 409, e409=_CANCEL_409)},
    )
    def post(self, request, number: str):
        order_cancel(order=_own_order(request, number), by=request.user)
        return Response(OrderSerializer(_own_order(request, number)).data)


class OrderPackageCancelView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        tags=["orders"],
        summary="Cancel one package of your order that has not shipped",
        description="Its stock is returned. Before payment the order then costs less; after "
        "payment the package's cost is refunded. The last package cancels the order.",
        request=None,
        responses={200: OrderSerializer, **error_responses(401, 403, 404, 409, e409=_CANCEL_409)},
    )
    def post(self, request, number: str, package_id: int):
        merchant_order_cancel_by_shopper(
            order=_own_order(request, number), merchant_order_id=package_id, by=request.user
        )
        return Response(OrderSerializer(_own_order(request, number)).data)
