"""The cart API's URLs, mounted under ``/api/v1/`` in the ``api`` namespace by the root
URLconf (``API_URLCONFS``)."""

from django.urls import path

from storefront.carts import apis

urlpatterns = [
    path("cart/", apis.CartView.as_view(), name="cart"),
    path("cart/lines/", apis.CartLineListView.as_view(), name="cart-lines"),
    path("cart/lines/<int:line_id>/", apis.CartLineDetailView.as_view(), name="cart-line"),
    path("cart/destination/", apis.CartDestinationView.as_view(), name="cart-destination"),
]
