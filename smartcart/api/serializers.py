"""Serializers: shapes in and out of the API, no business logic. Money is integer cents."""

import copy

from django.conf import settings
from django.urls import reverse
from rest_framework import serializers

from smartcart.models import OptimizationRun
from storefront.models import MAX_LINE_QUANTITY
from storefront.selectors import PRODUCT_ORDERINGS, CartPricingSummary, LinePricing

# --- catalog ------------------------------------------------------------------------------


class CategorySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    slug = serializers.SlugField()


class CategoryListSerializer(CategorySerializer):
    product_count = serializers.IntegerField()


class CheapestOfferSerializer(serializers.Serializer):
    offer_id = serializers.IntegerField()
    unit_price = serializers.IntegerField(help_text="In cents.")
    merchant_id = serializers.IntegerField()
    merchant_name = serializers.CharField()


class ProductSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    gtin = serializers.CharField()
    name = serializers.CharField()
    slug = serializers.SlugField()
    description = serializers.CharField()
    category = CategorySerializer()
    cheapest_offer = serializers.SerializerMethodField(
        help_text="The cheapest offer that can be bought now, or null when none can."
    )
    offer_count = serializers.IntegerField(
        help_text="Offers that can be bought now.", allow_null=True
    )

    def get_cheapest_offer(self, product) -> CheapestOfferSerializer(allow_null=True):
        if product.best_offer_id is None:
            return None
        return {
            "offer_id": product.best_offer_id,
            "unit_price": product.best_price,
            "merchant_id": product.best_merchant_id,
            "merchant_name": product.best_merchant_name,
        }

    def to_representation(self, product):
        data = super().to_representation(product)
        data["offer_count"] = data["offer_count"] or 0
        return data


class ProductFilterSerializer(serializers.Serializer):
    """Query parameters of the product list."""

    search = serializers.CharField(
        required=False, allow_blank=True, max_length=200, help_text="Name words or a GTIN."
    )
    category = serializers.CharField(
        required=False, max_length=120, help_text="Category id or slug."
    )
    merchant = serializers.IntegerField(
        required=False, min_value=1, help_text="Only products this merchant sells."
    )
    available = serializers.BooleanField(
        required=False, default=False, help_text="Only products that can be bought now."
    )
    ordering = serializers.ChoiceField(
        choices=list(PRODUCT_ORDERINGS), required=False, default="name"
    )


class MerchantBriefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    slug = serializers.SlugField()


class OfferSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    product_id = serializers.IntegerField()
    merchant = MerchantBriefSerializer()
    merchant_sku = serializers.CharField()
    unit_price = serializers.IntegerField(help_text="In cents.")
    stock = serializers.IntegerField(allow_null=True, help_text="Null: unlimited.")
    in_stock = serializers.SerializerMethodField()

    def get_in_stock(self, offer) -> bool:
        return offer.stock is None or offer.stock > 0


class ShippingSerializer(serializers.Serializer):
    base_fee = serializers.IntegerField(help_text="First unit, in cents.")
    per_extra_unit = serializers.IntegerField(help_text="Each further unit, in cents.")
    free_over = serializers.IntegerField(
        allow_null=True, help_text="Free when goods reach this (cents); null: never free."
    )


class DiscountSerializer(serializers.Serializer):
    min_units = serializers.IntegerField()
    basis_points = serializers.IntegerField(help_text="500 = 5%.")


class ShippingZoneSerializer(ShippingSerializer):
    postal_prefix = serializers.CharField(help_text="Empty: everywhere.")
    name = serializers.CharField()


class MerchantSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    slug = serializers.SlugField()
    shipping = serializers.SerializerMethodField(help_text="Defaults, where no zone matches.")
    discount = serializers.SerializerMethodField()
    offer_count = serializers.IntegerField()
    zone_count = serializers.IntegerField()

    def get_shipping(self, merchant) -> ShippingSerializer:
        return merchant.default_shipping_rule().as_spec()

    def get_discount(self, merchant) -> DiscountSerializer(allow_null=True):
        return merchant.discount.as_spec() if merchant.discount else None


class MerchantDetailSerializer(MerchantSerializer):
    zones = ShippingZoneSerializer(many=True, help_text="The longest matching prefix wins.")


# --- cart ---------------------------------------------------------------------------------


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
    problem = serializers.CharField(
        allow_null=True,
        help_text="Why the line cannot be bought now: offer_inactive, merchant_inactive, "
        "insufficient_stock; null when it can.",
    )


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

    def get_line_ids(self, group) -> list[int]:
        return [line.line_id for line in group.lines]


class PriceWatchSerializer(serializers.Serializer):
    optimization_id = serializers.IntegerField()
    cart_version = serializers.IntegerField()
    current_total = serializers.IntegerField()
    suggested_total = serializers.IntegerField()
    savings = serializers.IntegerField(help_text="In cents; 0 when only prices rose.")
    price_increase = serializers.IntegerField(
        help_text="How much more the cart's lines cost now than when added, in cents."
    )
    created_at = serializers.DateTimeField()


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
    price_watch = serializers.SerializerMethodField(
        help_text="Set when prices changed since the cart was last looked at: what it can "
        "save now (`savings`, apply it with `POST cart/optimizations/{optimization_id}/apply/`, "
        "the usual 409 rules) and how much its lines rose since added (`price_increase`). "
        "`null`: nothing to tell."
    )

    def get_price_watch(self, summary: CartPricingSummary) -> PriceWatchSerializer(allow_null=True):
        notice = self.context.get("price_watch")
        return None if notice is None else PriceWatchSerializer(notice.as_dict()).data

    def get_lines(self, summary: CartPricingSummary) -> CartLineSerializer(many=True):
        lines: list[LinePricing] = [line for group in summary.groups for line in group.lines]
        lines += list(summary.unavailable)
        lines.sort(key=lambda line: (line.line.created_at, line.line_id))
        return CartLineSerializer(lines, many=True).data


class CartLineAddSerializer(serializers.Serializer):
    offer_id = serializers.IntegerField(min_value=1)
    quantity = serializers.IntegerField(min_value=1, max_value=MAX_LINE_QUANTITY, default=1)


class CartLineQuantitySerializer(serializers.Serializer):
    quantity = serializers.IntegerField(
        min_value=1, max_value=MAX_LINE_QUANTITY, help_text="Use DELETE to remove the line."
    )


class CartDestinationSerializer(serializers.Serializer):
    postal_code = serializers.CharField(
        max_length=20, allow_blank=True, allow_null=True, help_text="Empty or null clears it."
    )


# --- optimizations ------------------------------------------------------------------------


class OptimizationCreateSerializer(serializers.Serializer):
    budget_ms = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=60_000,
        help_text="Time the optimizer may take for carts too large to solve exactly.",
    )


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
    changed = serializers.BooleanField()


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


class SuggestionSerializer(serializers.Serializer):
    lines = SuggestedLineSerializer(many=True)
    merchants = SuggestedMerchantSerializer(many=True, help_text="With the suggestion.")
    current_merchants = SuggestedMerchantSerializer(many=True, help_text="The cart as it was.")
    kept_current = serializers.BooleanField(
        help_text="True when nothing cheaper was found than the cart as it is."
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
        # arguments (~25 us a field, ~0.6 ms a response). A shallow copy binds to this
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

    def get_suggestion(self, run) -> SuggestionSerializer(allow_null=True):
        return run.suggestion or None

    def get_timings(self, run) -> TimingsSerializer:
        return {
            "build_ms": run.build_ms,
            "queue_wait_ms": run.queue_wait_ms,
            "solve_ms": run.solve_ms,
            "elapsed_ms": run.elapsed_ms,
        }


class TokenObtainSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=128, style={"input_type": "password"})


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`.")
