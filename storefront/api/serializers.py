"""Serializers of the marketplace API (catalog, cart, auth): shapes in and out, no business
logic. Money is integer cents."""

from typing import Any

from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from storefront.carts.pricing_summary import CartPricingSummary, LinePricing
from storefront.catalog.selectors import PRODUCT_ORDERINGS
from storefront.models import MAX_LINE_QUANTITY
from storefront.search.prices import PRICE_RANGE_KEYS

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
    brand = serializers.CharField()
    description = serializers.CharField()
    category = CategorySerializer()
    cheapest_offer = serializers.SerializerMethodField(
        help_text="The cheapest offer that can be bought now, or null when none can."
    )
    offer_count = serializers.IntegerField(
        help_text="Offers that can be bought now.", allow_null=True
    )

    @extend_schema_field(CheapestOfferSerializer(allow_null=True))
    def get_cheapest_offer(self, product) -> dict[str, Any] | None:
        if product.best_offer_id is None:
            return None
        return {
            "offer_id": product.best_offer_id,
            "unit_price": product.best_price,
            "merchant_id": product.best_merchant_id,
            "merchant_name": product.best_merchant_name,
        }

    def to_representation(self, product):
        # The fields above, written out: DRF's field-by-field walk (nested category and
        # method field included) was a sixth of the product search's render. The fields stay
        # declared for the schema; tests compare both.
        category = product.category
        return {
            "id": product.pk,
            "gtin": product.gtin,
            "name": product.name,
            "slug": product.slug,
            "brand": product.brand,
            "description": product.description,
            "category": {"id": category.pk, "name": category.name, "slug": category.slug},
            "cheapest_offer": self.get_cheapest_offer(product),
            "offer_count": product.offer_count or 0,
        }


class ProductFilterSerializer(serializers.Serializer):
    """Query parameters of the product list."""

    search = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text="Words (name, brand, description, category; misspellings tolerated), "
        "a GTIN or a merchant SKU.",
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
    price_range = serializers.ChoiceField(
        choices=list(PRICE_RANGE_KEYS),
        required=False,
        default="",
        help_text="Cheapest buyable price in this range of currency units ('10-25'; '250-': "
        "and more).",
    )
    ships_free_to = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=10,
        help_text="Only products one unit of which ships free to this postal code; also adds "
        "its count to the facets.",
    )
    ordering = serializers.ChoiceField(
        choices=list(PRODUCT_ORDERINGS),
        required=False,
        default="relevance",
        help_text="relevance: best match first with a search, else by name.",
    )


class FacetValueSerializer(serializers.Serializer):
    key = serializers.CharField(help_text="The value to pass as the filter parameter.")
    name = serializers.CharField(source="label", help_text="What to show, e.g. '€10.00 to €25.00'.")
    count = serializers.IntegerField(help_text="Products listed with this value chosen.")
    selected = serializers.BooleanField()


class FacetsSerializer(serializers.Serializer):
    category = FacetValueSerializer(many=True, source="categories")
    merchant = FacetValueSerializer(many=True, source="merchants")
    price_range = FacetValueSerializer(many=True, source="price_ranges")
    available = FacetValueSerializer(source="in_stock")
    ships_free = FacetValueSerializer(allow_null=True)


# many=False: the list view answers one page object, not an array of them (drf-spectacular
# would otherwise document a ListAPIView's response as an array).
@extend_schema_serializer(many=False)
class ProductPageSerializer(serializers.Serializer):
    """The product list's page: DRF's pagination plus the facets of the whole result."""

    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = ProductSerializer(many=True)
    facets = FacetsSerializer()


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

    @extend_schema_field(ShippingSerializer)
    def get_shipping(self, merchant) -> dict[str, Any]:
        return merchant.default_shipping_rule().as_spec()

    @extend_schema_field(DiscountSerializer(allow_null=True))
    def get_discount(self, merchant) -> dict[str, Any] | None:
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


# --- auth ---------------------------------------------------------------------------------


class TokenObtainSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=128, style={"input_type": "password"})


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`.")
