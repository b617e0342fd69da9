"""The REST API under ``/api/v1/`` (included by ``storefront.urls``)."""

from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from smartcart.api.views import auth, carts, catalog, optimizations
from smartcart.api.views.fallback import NotFoundView
from storefront.api import orders

app_name = "api"

urlpatterns = [
    path("auth/token/", auth.TokenObtainView.as_view(), name="token-obtain"),
    path("products/", catalog.ProductListView.as_view(), name="product-list"),
    path("products/<int:product_id>/", catalog.ProductDetailView.as_view(), name="product-detail"),
    path(
        "products/<int:product_id>/offers/",
        catalog.ProductOfferListView.as_view(),
        name="product-offers",
    ),
    path("merchants/", catalog.MerchantListView.as_view(), name="merchant-list"),
    path(
        "merchants/<int:merchant_id>/", catalog.MerchantDetailView.as_view(), name="merchant-detail"
    ),
    path("categories/", catalog.CategoryListView.as_view(), name="category-list"),
    path("cart/", carts.CartView.as_view(), name="cart"),
    path("cart/lines/", carts.CartLineListView.as_view(), name="cart-lines"),
    path("cart/lines/<int:line_id>/", carts.CartLineDetailView.as_view(), name="cart-line"),
    path("cart/destination/", carts.CartDestinationView.as_view(), name="cart-destination"),
    path(
        "cart/optimizations/",
        optimizations.OptimizationListView.as_view(),
        name="optimization-list",
    ),
    path(
        "cart/optimizations/<int:run_id>/",
        optimizations.OptimizationDetailView.as_view(),
        name="optimization-detail",
    ),
    path(
        "cart/optimizations/<int:run_id>/apply/",
        optimizations.OptimizationApplyView.as_view(),
        name="optimization-apply",
    ),
    path(
        "cart/optimizations/<int:run_id>/dismiss/",
        optimizations.OptimizationDismissView.as_view(),
        name="optimization-dismiss",
    ),
    *orders.urlpatterns,
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    # Last: any other path under /api/v1/ answers with the JSON error body, not an HTML page.
    re_path(r"^.*$", NotFoundView.as_view(), name="not-found"),
]
