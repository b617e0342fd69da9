"""The price watch's REST API, mounted under ``/api/v1/`` in the ``api`` namespace by the
root URLconf (``storefront.config.urls``, by dotted string): no ``app_name`` of its own."""

from django.urls import path

from smartcart.pricewatch.apis import PriceWatchSettingsView

urlpatterns = [
    path("cart/price-watch/", PriceWatchSettingsView.as_view(), name="price-watch-settings"),
]
