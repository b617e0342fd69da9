"""Improve cart's REST API: start an optimization of your cart, follow it, apply or dismiss
it. Money is integer cents."""

import copy
from typing import Any

from django.conf import settings
from django.urls import reverse
from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
)
from rest_framework import serializers, status
from rest_framework.response import Response

from smartcart.models import OptimizationRun
from smartcart.selectors import cart_lines_find, optimization_run_get, optimization_run_list
from smartcart.services import (
    optimization_run_apply,
    optimization_run_create,
    optimization_run_dismiss,
    optimization_run_poll_check,
)
from storefront.api.errors import error_responses
from storefront.api.inputs import json_body, validated
from storefront.api.pagination import StrictPageNumberPagination
from storefront.api.parcels import NodeParcelSerializer
from storefront.carts.apis import CartBaseView, CartResource, cart_response, no_cart, own_cart
from storefront.security.idempotency import IDEMPOTENCY_KEY_PARAMETER, idempotent

# --- serializers shared by the views ----------------------------------------------------


class SuggestedLineSerializer(serializers.Serializer):
    line_id = serializers.IntegerField()
    product_id = serializers.IntegerField()
    product_name = serializers.CharField()
    quantity = serializers.IntegerField()
    old_offer_id = serializers.IntegerField()
    old_merchant_id = serializers.IntegerField()
    old_merchant_name = serializers.CharField()
    old_unit_price = serializers.IntegerField()
    new_offer_id = serializers.IntegerField()
    new_merchant_id = serializers.IntegerField()
    new_merchant_name = serializers.CharField()
    new_unit_price = serializers.IntegerField()
    old_warehouse_id = serializers.IntegerField(
        allow_null=True, required=False, help_text="Null: a merchant without warehouses."
    )
    old_warehouse_name = serializers.CharField(allow_blank=True, required=False)
    new_warehouse_id = serializers.IntegerField(
        allow_null=True,
        required=False,
        help_text="The warehouse applying ships it from. Null: a merchant without warehouses, "
        "or a run stored before warehouses (applying picks one, as adding to the cart does).",
    )
    new_warehouse_name = serializers.CharField(allow_blank=True, required=False)
    changed = serializers.BooleanField(help_text="Its offer or its warehouse changes.")


class SuggestedMerchantSerializer(serializers.Serializer):
    merchant_id = serializers.IntegerField()
    merchant_name = serializers.CharField()
    line_ids = serializers.ListField(child=serializers.IntegerField())
    units = serializers.IntegerField()
    subtotal = serializers.IntegerField()
    discount = serializers.IntegerField()
    shipping = serializers.IntegerField()
    cost = serializers.IntegerField()
    free_over = serializers.IntegerField(allow_null=True)
    missing_for_free_shipping = serializers.IntegerField(allow_null=True)
    parcels = NodeParcelSerializer(
        many=True, required=False, help_text="One a warehouse (node) that ships something."
    )


class SuggestionSerializer(serializers.Serializer):
    lines = SuggestedLineSerializer(many=True)
    merchants = SuggestedMerchantSerializer(many=True, help_text="With the suggestion.")
    current_merchants = SuggestedMerchantSerializer(many=True, help_text="The cart as it was.")
    kept_current = serializers.BooleanField(
        help_text="True when nothing cheaper was found than the cart as it is."
    )
    sold_out_line_ids = serializers.ListField(
        child=serializers.IntegerField(),
        required=False,
        help_text="Lines sold out at their merchant that the suggestion buys elsewhere; the "
        "cart as it was (current_merchants) already has them moved. Absent: none.",
    )


class TimingsSerializer(serializers.Serializer):
    build_ms = serializers.FloatField(allow_null=True, help_text="Reading the cart.")
    queue_wait_ms = serializers.FloatField(allow_null=True, help_text="Waiting for a worker.")
    solve_ms = serializers.FloatField(allow_null=True, help_text="The solver.")
    elapsed_ms = serializers.FloatField(allow_null=True, help_text="Request to answer.")


class OptimizationRunSerializer(serializers.Serializer):
    """An optimization run. Explicit fields (not a ModelSerializer): it is on every improve-cart
    response and poll, and building fields by model introspection per response costs more
    than the rest of the serialization."""

    id = serializers.IntegerField()
    url = serializers.SerializerMethodField()
    apply_url = serializers.SerializerMethodField()
    status = serializers.ChoiceField(choices=OptimizationRun.Status.choices)
    route = serializers.ChoiceField(
        choices=OptimizationRun.Route.choices, help_text="Where the job ran."
    )
    cart_version = serializers.IntegerField(help_text="The cart version it was computed for.")
    is_stale = serializers.BooleanField(help_text="The cart changed since; it cannot be applied.")
    is_improvement = serializers.BooleanField()
    algorithm = serializers.CharField(help_text="The solver that answered (empty until done).")
    optimal = serializers.BooleanField(help_text="The total is proven minimal.")
    device = serializers.CharField()
    currency = serializers.SerializerMethodField()
    current_total = serializers.IntegerField(allow_null=True, help_text="In cents.")
    suggested_total = serializers.IntegerField(allow_null=True, help_text="In cents.")
    savings = serializers.IntegerField(allow_null=True, help_text="In cents.")
    savings_percent = serializers.FloatField(allow_null=True)
    suggestion = serializers.SerializerMethodField()
    plan = serializers.JSONField(
        allow_null=True, help_text="The planner's choice, its reason and predicted times."
    )
    problem_size = serializers.JSONField(help_text="Lines, merchants, offers, complexity.")
    timings = serializers.SerializerMethodField()
    error = serializers.CharField(help_text="Why it failed (empty otherwise).")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    applied_at = serializers.DateTimeField(allow_null=True)
    dismissed_at = serializers.DateTimeField(allow_null=True)

    def get_fields(self) -> dict[str, serializers.Field]:
        # DRF deep-copies every declared field for each serializer, rebuilding it from its
        # arguments, a large share of the response's cost. A shallow copy binds to this
        # serializer just the same: what it shares with the declared field (choices,
        # validators, help text) is only read.
        return {name: copy.copy(field) for name, field in self._declared_fields.items()}

    def _absolute(self, path: str) -> str:
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request else path

    def get_url(self, run) -> str:
        return self._absolute(reverse("api:optimization-detail", args=[run.pk]))

    def get_apply_url(self, run) -> str:
        return self._absolute(reverse("api:optimization-apply", args=[run.pk]))

    def get_currency(self, run) -> str:
        return settings.SHOP_CURRENCY

    @extend_schema_field(SuggestionSerializer(allow_null=True))
    def get_suggestion(self, run) -> dict[str, Any] | None:
        return run.suggestion or None

    @extend_schema_field(TimingsSerializer)
    def get_timings(self, run) -> dict[str, float | None]:
        return {
            "build_ms": run.build_ms,
            "queue_wait_ms": run.queue_wait_ms,
            "solve_ms": run.solve_ms,
            "elapsed_ms": run.elapsed_ms,
        }


# --- views ----------------------------------------------------------------------------


def run_response(request, run: OptimizationRun, *, status_code: int = 200) -> Response:
    data = OptimizationRunSerializer(run, context={"request": request}).data
    headers = {"Location": data["url"]} if status_code in (201, 202) else None
    return Response(data, status=status_code, headers=headers)


class OptimizationListView(CartBaseView):
    # Declared so that the schema documents the paginated object the view answers.
    pagination_class = StrictPageNumberPagination

    @extend_schema_serializer(component_name="OptimizationCreate")
    class InputSerializer(serializers.Serializer):
        budget_ms = serializers.IntegerField(
            required=False,
            allow_null=True,
            min_value=1,
            max_value=60_000,
            help_text="Time the optimizer may take for carts too large to solve exactly.",
        )

    # Starting a run is rate limited once, in optimization_run_create (smartcart.ratelimit), so
    # the API and the web page share one counter; a second DRF throttle here would only add a
    # cache round trip to every request.

    @extend_schema(
        tags=["optimizations"],
        summary="Your cart's optimizations, newest first",
        responses={
            200: OptimizationRunSerializer(many=True),
            **error_responses(401, 403, 404, 429),
        },
    )
    def get(self, request):
        cart = own_cart(request)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(optimization_run_list(cart=cart), request, view=self)
        data = OptimizationRunSerializer(page, many=True, context={"request": request}).data
        return paginator.get_paginated_response(data)

    @extend_schema(
        tags=["optimizations"],
        summary="Improve your cart",
        description="Finds the cheapest way to buy your cart as it is now: prices, shipping "
        "and multi-item discounts together. Small carts are solved at once (201, `done`); "
        "larger ones are queued (202, `queued`): poll the `Location` URL until `status` is "
        "`done` or `failed`. A run already queued for the same cart version is returned "
        "again rather than started twice.",
        parameters=[IDEMPOTENCY_KEY_PARAMETER],
        request=json_body(InputSerializer),
        responses={
            201: OpenApiResponse(OptimizationRunSerializer, description="Solved at once."),
            202: OpenApiResponse(OptimizationRunSerializer, description="Queued."),
            **error_responses(
                400,
                401,
                403,
                404,
                409,
                415,
                422,
                429,
                503,
                e400="Bad input, or `cart_empty`.",
                e409="`line_unavailable`: a line cannot be bought as it is; fix it first.",
            ),
        },
    )
    @idempotent
    def post(self, request):
        data = validated(self.InputSerializer, request.data)
        # The caller's cart and its lines in one query (the service would read them again).
        found = cart_lines_find(user=request.user)
        if found is None:
            raise no_cart()
        run = optimization_run_create(
            cart=found.cart, lines=found, requested_by=request.user, budget_ms=data.get("budget_ms")
        )
        finished = run.status in (OptimizationRun.Status.DONE, OptimizationRun.Status.FAILED)
        code = status.HTTP_201_CREATED if finished else status.HTTP_202_ACCEPTED
        return run_response(request, run, status_code=code)


class OptimizationDetailView(CartBaseView):
    @extend_schema(
        tags=["optimizations"],
        summary="One optimization of your cart",
        responses={200: OptimizationRunSerializer, **error_responses(401, 403, 404, 429)},
    )
    def get(self, request, run_id: int):
        run = optimization_run_get(run_id=run_id, cart=own_cart(request))
        return run_response(request, optimization_run_poll_check(run=run))


class OptimizationApplyView(CartBaseView):
    @extend_schema(
        tags=["optimizations"],
        summary="Apply a suggestion to your cart",
        description="Moves each line to its suggested offer, all or nothing. Refused with "
        "409 when the cart changed since the run (`cart_changed`), a suggested offer's "
        "price, stock or availability changed (`price_changed`, `stock_changed`, "
        "`offer_unavailable`), shipping terms changed (`terms_changed`), or the run is not "
        "done, already applied or dismissed (`not_done`, `already_applied`, `dismissed`).",
        request=None,
        responses={
            200: OpenApiResponse(CartResource, description="The updated cart."),
            **error_responses(401, 403, 404, 409, 429),
        },
    )
    def post(self, request, run_id: int):
        run = optimization_run_get(run_id=run_id, cart=own_cart(request))
        return cart_response(optimization_run_apply(run=run, user=request.user))


class OptimizationDismissView(CartBaseView):
    @extend_schema(
        tags=["optimizations"],
        summary="Dismiss a suggestion",
        request=None,
        responses={200: OptimizationRunSerializer, **error_responses(401, 403, 404, 429)},
    )
    def post(self, request, run_id: int):
        run = optimization_run_get(run_id=run_id, cart=own_cart(request))
        return run_response(request, optimization_run_dismiss(run=run))
