"""The catalog API, read-only: products (with their lowest-priced offer), offers, merchants,
categories. Money is integer cents."""

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_serializer
from rest_framework import generics, serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from storefront.api.errors import error_responses
from storefront.api.inputs import IdField, id_or_slug
from storefront.api.pagination import StrictPageNumberPagination
from storefront.caching.api import CachedListMixin
from storefront.caching.versions import CATALOG, SHARED
from storefront.catalog.selectors import (
    PRODUCT_ORDERINGS,
    category_list,
    merchant_list,
    product_get,
    product_offer_list,
)
from storefront.catalog.stock_selectors import OfferStock, offers_line_stock
from storefront.errors import NotFound
from storefront.models import Merchant
from storefront.search import search_prepare
from storefront.search.cards import products_cheapest_delivered
from storefront.search.delivered import delivered_terms_read
from storefront.search.facets import CatalogFilters, product_facets
from storefront.search.listing import ProductListPages
from storefront.search.prices import PRICE_RANGE_KEYS
from storefront.web.pagination import counted_paginator_class

# --- serializers --------------------------------------------------------------------------


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


class CheapestDeliveredSerializer(serializers.Serializer):
    offer_id = serializers.IntegerField()
    merchant_id = serializers.IntegerField()
    merchant_name = serializers.CharField()
    unit_price = serializers.IntegerField(help_text="In cents.")
    shipping = serializers.IntegerField(
        help_text="In cents: what one unit adds to shipping (0 where it ships free)."
    )
    delivered_price = serializers.IntegerField(help_text="In cents: unit price plus shipping.")
    postal_code = serializers.CharField(help_text="The destination it assumes (deliver_to).")


class ProductSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    gtin = serializers.CharField()
    name = serializers.CharField()
    slug = serializers.SlugField()
    brand = serializers.CharField()
    description = serializers.CharField()
    category = CategorySerializer()
    cheapest_offer = serializers.SerializerMethodField(
        help_text=(
            "The offer with the lowest item price that can be bought now, or null when none "
            "can. Shipping is not included: it depends on the destination and on what else the "
            "cart buys from that merchant, so the cheapest delivered offer may be another "
            "(`cheapest_delivered`, with `deliver_to`; this one is then null)."
        )
    )
    offer_count = serializers.IntegerField(
        help_text="Offers that can be bought now.", allow_null=True
    )
    cheapest_delivered = serializers.SerializerMethodField(
        help_text=(
            "With `deliver_to` on the product list: the offer that costs least delivered to "
            "that postal code, one unit bought on its own (item price plus that merchant's "
            "shipping, none where one unit reaches free shipping; the ranking the shop's "
            "product page uses for an empty cart). Null without `deliver_to`, or when nothing "
            "can be bought now."
        )
    )

    @extend_schema_field(CheapestOfferSerializer(allow_null=True))
    def get_cheapest_offer(self, product) -> dict[str, Any] | None:
        # A list priced for ``deliver_to`` reads delivered prices instead (cheapest_delivered).
        if getattr(product, "best_offer_id", None) is None:
            return None
        return {
            "offer_id": product.best_offer_id,
            "unit_price": product.best_price,
            "merchant_id": product.best_merchant_id,
            "merchant_name": product.best_merchant_name,
        }

    @extend_schema_field(CheapestDeliveredSerializer(allow_null=True))
    def get_cheapest_delivered(self, product) -> dict[str, Any] | None:
        listed = self.context.get("cheapest_delivered", {}).get(product.pk)
        if listed is None:
            return None
        cost = listed.cost
        return {
            "offer_id": cost.offer_id,
            "merchant_id": cost.merchant_id,
            "merchant_name": listed.merchant_name,
            "unit_price": cost.unit_price,
            "shipping": cost.shipping_change,
            "delivered_price": cost.increment,
            "postal_code": self.context["deliver_to"],
        }

    def _offer_count(self, product) -> int:
        listed = self.context.get("cheapest_delivered", {}).get(product.pk)
        if listed is not None:
            return listed.offer_count
        return getattr(product, "offer_count", None) or 0

    def to_representation(self, product):
        # The fields above, written out: DRF's field-by-field walk (nested category and
        # method field included) is a large share of the product search's render. The fields stay
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
            "offer_count": self._offer_count(product),
            "cheapest_delivered": self.get_cheapest_delivered(product),
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
        required=False, allow_blank=True, max_length=120, help_text="Category id or slug."
    )
    merchant = IdField(required=False, help_text="Only products this merchant sells.")
    available = serializers.BooleanField(
        required=False, default=False, help_text="Only products that can be bought now."
    )
    price_range = serializers.ChoiceField(
        choices=list(PRICE_RANGE_KEYS),
        required=False,
        allow_blank=True,
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
    deliver_to = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=10,
        help_text="A postal code: the price order, the price ranges and each product's "
        "`cheapest_delivered` use the price delivered there (item plus shipping, one unit "
        "bought on its own), as the shop's listing does. Empty: item prices.",
    )
    ordering = serializers.ChoiceField(
        choices=list(PRODUCT_ORDERINGS),
        required=False,
        allow_blank=True,
        default="relevance",
        help_text="relevance: best match first with a search, else by name (also when empty).",
    )

    # An empty filter (a form's blank field) is no filter.
    def validate_category(self, value: str) -> str | int | None:
        return id_or_slug(value) if value else None

    def validate_ordering(self, value: str) -> str:
        return value or "relevance"


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


class OfferWarehouseSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="warehouse_id")
    name = serializers.CharField(help_text="'Ships from <name>'.")
    stock = serializers.IntegerField(allow_null=True, help_text="Units there; null: unlimited.")
    ships_to_destination = serializers.BooleanField(
        source="ships",
        allow_null=True,
        help_text="Whether it ships to `deliver_to` (a parcel rate for it); null without "
        "`deliver_to`.",
    )


class OfferSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    product_id = serializers.IntegerField()
    merchant = MerchantBriefSerializer()
    merchant_sku = serializers.CharField()
    unit_price = serializers.IntegerField(help_text="In cents.")
    stock = serializers.IntegerField(
        allow_null=True,
        help_text="Null: unlimited. For a merchant with warehouses, the total over them "
        "(one cart line may have less: `max_quantity`).",
    )
    in_stock = serializers.SerializerMethodField()
    max_quantity = serializers.SerializerMethodField(
        help_text="The most units one cart line of this offer can have; null: unlimited. The "
        "offer's stock for a merchant without warehouses. For one with warehouses, a line "
        "ships whole from one: the most one warehouse holds, among those that ship to "
        "`deliver_to` when it is given (any active warehouse without it), never their sum."
    )
    warehouses = serializers.SerializerMethodField(
        help_text="For a merchant with warehouses, its active ones that hold the offer, "
        "each with its stock; null for a merchant without warehouses."
    )

    def get_in_stock(self, offer) -> bool:
        return offer.stock is None or offer.stock > 0

    def _line_stock(self, offer) -> OfferStock:
        found = self.context.get("line_stock", {}).get(offer.pk)
        return found if found is not None else OfferStock(offer.stock, None)

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_max_quantity(self, offer) -> int | None:
        return self._line_stock(offer).max_quantity

    @extend_schema_field(OfferWarehouseSerializer(many=True, allow_null=True))
    def get_warehouses(self, offer) -> list[dict[str, Any]] | None:
        held = self._line_stock(offer).warehouses
        if held is None:
            return None
        return list(OfferWarehouseSerializer(held, many=True).data)


class OfferFilterSerializer(serializers.Serializer):
    """Query parameters of a product's offers."""

    deliver_to = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=10,
        help_text="A postal code: `max_quantity` counts only warehouses that ship there, and "
        "each warehouse says whether it does, as the cart prices a line for that "
        "destination. Empty: every active warehouse counts.",
    )


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


# --- views ----------------------------------------------------------------------------------


class CatalogView(APIView):
    permission_classes = [AllowAny]


@extend_schema(
    tags=["catalog"],
    summary="Search and browse products, with facet counts",
    parameters=[ProductFilterSerializer],
    responses={200: ProductPageSerializer, **error_responses(400, 429)},
)
class ProductListView(CachedListMixin, CatalogView, generics.ListAPIView):
    serializer_class = ProductSerializer
    pagination_class = None  # paginated in list(), next to the facets

    def _filters(self) -> tuple[CatalogFilters, str, str]:
        params = ProductFilterSerializer(data=self.request.query_params)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        query = data.get("search", "").strip()
        filters = CatalogFilters(
            # Prepared once for the list and every facet.
            query=search_prepare(query) if query else "",
            category=data.get("category"),
            merchant_id=data.get("merchant"),
            available_only=data["available"],
            price_range=data["price_range"],
            ships_free_to=data["ships_free_to"],
        )
        return filters, data["ordering"], data["deliver_to"].strip()

    def list(self, request, *args, **kwargs):
        filters, ordering, deliver_to = self._filters()
        # Delivered prices where a destination is named: the shop's listing's terms.
        terms = delivered_terms_read(postal_code=deliver_to) if deliver_to else None
        facets = product_facets(filters=filters, postal_code=filters.ships_free_to, terms=terms)
        paginator = StrictPageNumberPagination()
        # The facets' grouped query counted the list already.
        paginator.django_paginator_class = counted_paginator_class(facets.listed)
        products = ProductListPages(
            filters=filters, ordering=ordering, count=facets.listed, terms=terms
        )
        page = paginator.paginate_queryset(products, request, view=self) or []
        cheapest: dict[int, Any] = {}
        if terms is not None:
            cheapest = products_cheapest_delivered(
                product_ids=[product.pk for product in page],
                postal_code=deliver_to,
                warehouses={m.merchant_id: m.nodes for m in terms.warehouses},
            )
        context = {"deliver_to": deliver_to, "cheapest_delivered": cheapest}
        data = ProductSerializer(page, many=True, context=context).data
        response = paginator.get_paginated_response(data)
        response.data["facets"] = FacetsSerializer(facets).data
        return response


@extend_schema(
    tags=["catalog"],
    summary="One product with its lowest-priced offer",
    responses={200: ProductSerializer, **error_responses(404, 429)},
)
class ProductDetailView(CatalogView, APIView):
    def get(self, request, product_id: int):
        return Response(ProductSerializer(product_get(product_id=product_id)).data)


@extend_schema(
    tags=["catalog"],
    summary="A product's offers, lowest item price first",
    description="Active offers of active merchants; sold-out offers are listed with stock 0. "
    "Each says how many units one cart line can have (`max_quantity`): a merchant with "
    "warehouses ships a line from one of them.",
    parameters=[OfferFilterSerializer],
    responses={200: OfferSerializer(many=True), **error_responses(400, 404, 429)},
)
class ProductOfferListView(CatalogView, APIView):
    def get(self, request, product_id: int):
        params = OfferFilterSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        deliver_to = params.validated_data["deliver_to"].strip()
        product = product_get(product_id=product_id)
        offers = list(product_offer_list(product=product))
        line_stock = offers_line_stock(offers=offers, postal_code=deliver_to or None)
        context = {"line_stock": line_stock}
        return Response(OfferSerializer(offers, many=True, context=context).data)


@extend_schema(
    tags=["catalog"],
    summary="Merchants with their default shipping and discount",
    responses={200: MerchantSerializer(many=True), **error_responses(429)},
)
class MerchantListView(CachedListMixin, CatalogView, generics.ListAPIView):
    serializer_class = MerchantSerializer
    pagination_class = StrictPageNumberPagination
    cache_versions = (CATALOG, SHARED)

    def get_queryset(self):
        return merchant_list()


@extend_schema(
    tags=["catalog"],
    summary="One merchant with its shipping zones",
    responses={200: MerchantDetailSerializer, **error_responses(404, 429)},
)
class MerchantDetailView(CatalogView, APIView):
    def get(self, request, merchant_id: int):
        merchants = merchant_list(active_only=True).prefetch_related("zones")
        try:
            merchant = merchants.get(pk=merchant_id)
        except Merchant.DoesNotExist:
            raise NotFound(
                "No such merchant.", code="merchant_not_found", field="merchant_id"
            ) from None
        return Response(MerchantDetailSerializer(merchant).data)


@extend_schema(
    tags=["catalog"],
    summary="Categories with their product counts",
    responses={200: CategoryListSerializer(many=True), **error_responses(429)},
)
class CategoryListView(CachedListMixin, CatalogView, generics.ListAPIView):
    serializer_class = CategoryListSerializer
    pagination_class = StrictPageNumberPagination

    def get_queryset(self):
        return category_list()
