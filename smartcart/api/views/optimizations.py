"""Improve cart: start an optimization of your cart, follow it, apply or dismiss it."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response

from smartcart.api.optimization_serializers import (
    OptimizationCreateSerializer,
    OptimizationRunSerializer,
)
from smartcart.models import OptimizationRun
from smartcart.selectors import cart_lines_find, optimization_run_get, optimization_run_list
from smartcart.services import (
    optimization_run_apply,
    optimization_run_create,
    optimization_run_dismiss,
    optimization_run_lease_check,
)
from storefront.api.cart_fields import cart_resource_serializer
from storefront.api.errors import error_responses
from storefront.api.views.carts import CartBaseView, cart_response, no_cart, own_cart, validated
from storefront.idempotency import IDEMPOTENCY_KEY_PARAMETER, idempotent


def run_response(request, run: OptimizationRun, *, status_code: int = 200) -> Response:
    data = OptimizationRunSerializer(run, context={"request": request}).data
    headers = {"Location": data["url"]} if status_code in (201, 202) else None
    return Response(data, status=status_code, headers=headers)


class OptimizationListView(CartBaseView):
    # Declared so that the schema documents the paginated object the view answers.
    pagination_class = PageNumberPagination

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
        request=OptimizationCreateSerializer,
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
        data = validated(OptimizationCreateSerializer, request.data)
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
        return run_response(request, optimization_run_lease_check(run=run))


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
            200: OpenApiResponse(cart_resource_serializer(), description="The updated cart."),
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
