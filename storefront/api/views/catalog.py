"""Catalog, read-only: products (with their cheapest offer), offers, merchants, categories."""

from drf_spectacular.utils import extend_schema
from rest_framework import generics
from rest_framework.pagination import PageNumberPagination
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from storefront.api.caching import CachedListMixin
from storefront.api.errors import error_responses
from storefront.api.serializers import (
    CategoryListSerializer,
    FacetsSerializer,
    MerchantDetailSerializer,
    MerchantSerializer,
    OfferSerializer,
    ProductFilterSerializer,
    ProductPageSerializer,
    ProductSerializer,
)
from storefront.caching.versions import CATALOG, SHARED
from storefront.catalog.selectors import (
    category_list,
    merchant_list,
    product_get,
    product_offer_list,
)
from storefront.errors import NotFound
from storefront.models import Merchant
from storefront.search import search_prepare
from storefront.search.facets import CatalogFilters, product_facets
from storefront.search.listing import ProductListPages
from storefront.web.pagination import counted_paginator_class


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

    def _filters(self) -> tuple[CatalogFilters, str]:
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
        return filters, data["ordering"]

    def list(self, request, *args, **kwargs):
        filters, ordering = self._filters()
        facets = product_facets(filters=filters, postal_code=filters.ships_free_to)
        paginator = PageNumberPagination()
        # The facets' grouped query counted the list already.
        paginator.django_paginator_class = counted_paginator_class(facets.listed)
        products = ProductListPages(filters=filters, ordering=ordering, count=facets.listed)
        page = paginator.paginate_queryset(products, request, view=self)
        response = paginator.get_paginated_response(ProductSerializer(page, many=True).data)
        response.data["facets"] = FacetsSerializer(facets).data
        return response


@extend_schema(
    tags=["catalog"],
    summary="One product with its cheapest offer",
    responses={200: ProductSerializer, **error_responses(404, 429)},
)
class ProductDetailView(CatalogView, APIView):
    def get(self, request, product_id: int):
        return Response(ProductSerializer(product_get(product_id=product_id)).data)


@extend_schema(
    tags=["catalog"],
    summary="A product's offers, cheapest first",
    description="Active offers of active merchants; sold-out offers are listed with stock 0.",
    responses={200: OfferSerializer(many=True), **error_responses(404, 429)},
)
class ProductOfferListView(CatalogView, APIView):
    def get(self, request, product_id: int):
        product = product_get(product_id=product_id)
        offers = product_offer_list(product=product)
        return Response(OfferSerializer(offers, many=True).data)


@extend_schema(
    tags=["catalog"],
    summary="Merchants with their default shipping and discount",
    responses={200: MerchantSerializer(many=True), **error_responses(429)},
)
class MerchantListView(CachedListMixin, CatalogView, generics.ListAPIView):
    serializer_class = MerchantSerializer
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

    def get_queryset(self):
        return category_list()
