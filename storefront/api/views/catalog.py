"""Catalog, read-only: products (with their cheapest offer), offers, merchants, categories."""

from drf_spectacular.utils import extend_schema
from rest_framework import generics
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from storefront.api.caching import CachedListMixin
from storefront.api.errors import error_responses
from storefront.api.serializers import (
    CategoryListSerializer,
    MerchantDetailSerializer,
    MerchantSerializer,
    OfferSerializer,
    ProductFilterSerializer,
    ProductSerializer,
)
from storefront.cache_versions import CATALOG, SHARED
from storefront.errors import NotFound
from storefront.models import Merchant
from storefront.selectors import (
    category_list,
    merchant_list,
    product_get,
    product_list,
    product_offer_list,
)


class CatalogView(APIView):
    permission_classes = [AllowAny]


@extend_schema(
    tags=["catalog"],
    summary="Search and browse products",
    parameters=[ProductFilterSerializer],
    responses={200: ProductSerializer(many=True), **error_responses(400, 429)},
)
class ProductListView(CachedListMixin, CatalogView, generics.ListAPIView):
    serializer_class = ProductSerializer

    def get_queryset(self):
        params = ProductFilterSerializer(data=self.request.query_params)
        params.is_valid(raise_exception=True)
        filters = params.validated_data
        return product_list(
            query=filters.get("search", ""),
            category=filters.get("category"),
            merchant_id=filters.get("merchant"),
            available_only=filters["available"],
            ordering=filters["ordering"],
        )


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
