"""The marketplace's REST API: catalog, cart, auth token, schema and docs.

The root URLconf (``storefront.config.urls``) mounts these under ``/api/v1/`` in the ``api``
namespace, together with the other apps' API modules it lists, and puts ``fallback_urlpatterns``
after all of them. So no ``app_name`` here: every module shares the one ``api`` namespace.
"""

from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from storefront.api import orders
from storefront.api.views import auth, carts, catalog
from storefront.api.views.fallback import NotFoundView

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
    *orders.urlpatterns,
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
]

# Last in /api/v1/: any other path answers with the JSON error body, not an HTML page.
fallback_urlpatterns = [
    re_path(r"^.*$", NotFoundView.as_view(), name="not-found"),
]
