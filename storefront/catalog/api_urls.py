"""The catalog API's URLs, mounted under ``/api/v1/`` in the ``api`` namespace by the root
URLconf (``API_URLCONFS``)."""

from django.urls import path

from storefront.catalog import apis

urlpatterns = [
    path("products/", apis.ProductListView.as_view(), name="product-list"),
    path("products/<int:product_id>/", apis.ProductDetailView.as_view(), name="product-detail"),
    path(
        "products/<int:product_id>/offers/",
        apis.ProductOfferListView.as_view(),
        name="product-offers",
    ),
    path("merchants/", apis.MerchantListView.as_view(), name="merchant-list"),
    path("merchants/<int:merchant_id>/", apis.MerchantDetailView.as_view(), name="merchant-detail"),
    path("categories/", apis.CategoryListView.as_view(), name="category-list"),
]
