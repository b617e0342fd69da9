"""The root URLconf. storefront is the Django project, so this is where the apps above it are
mounted, each by the dotted string of its URL module (``API_URLCONFS``, ``WEB_URLCONFS``): no
storefront module imports smartcart."""

from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path

from storefront.api.api_urls import fallback_urlpatterns
from storefront.observability import views as observability

# Every API module shares the one ``api`` namespace (``reverse("api:cart")``), so none of
# them has an app_name; the JSON 404 for any other /api/v1/ path comes after all of them.
API_URLCONFS = (
    "storefront.accounts.api_urls",
    "storefront.catalog.api_urls",
    "storefront.carts.api_urls",
    "storefront.orders.api_urls",
    "storefront.api.api_urls",
    "smartcart.api_urls",
    "smartcart.pricewatch.api_urls",
)
WEB_URLCONFS = ("smartcart.web.urls", "smartcart.pricewatch.urls", "storefront.web.urls")

api_urlpatterns: list[URLPattern | URLResolver] = [
    *(path("", include(module)) for module in API_URLCONFS),
    *fallback_urlpatterns,
]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("health/", observability.health, name="health"),
    path("health/live", observability.liveness, name="health-live"),
    path("metrics", observability.metrics, name="metrics"),
    path("api/v1/", include((api_urlpatterns, "api"))),
    # django-payments: the providers' return and webhook URLs.
    path("payments/", include("payments.urls")),
    *(path("", include(module)) for module in WEB_URLCONFS),
]
