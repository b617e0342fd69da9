"""The orders API's URLs (checkout review; placing, reading, paying and cancelling orders),
mounted under ``/api/v1/`` in the ``api`` namespace by the root URLconf (``API_URLCONFS``)."""

from django.urls import path

from storefront.orders.apis import (
    CheckoutReviewView,
    OrderCancelView,
    OrderDetailView,
    OrderListView,
    OrderPackageCancelView,
    OrderPaymentView,
)

urlpatterns = [
    path("checkout/review/", CheckoutReviewView.as_view(), name="checkout-review"),
    path("orders/", OrderListView.as_view(), name="order-list"),
    path("orders/<str:number>/", OrderDetailView.as_view(), name="order-detail"),
    path("orders/<str:number>/payment/", OrderPaymentView.as_view(), name="order-payment"),
    path("orders/<str:number>/cancel/", OrderCancelView.as_view(), name="order-cancel"),
    path(
        "orders/<str:number>/packages/<int:package_id>/cancel/",
        OrderPackageCancelView.as_view(),
        name="order-package-cancel",
    ),
]
