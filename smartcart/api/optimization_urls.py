"""Improve cart's REST API, mounted under ``/api/v1/`` in the ``api`` namespace by the root
URLconf (``storefront.config.urls``, by dotted string): no ``app_name`` of its own."""

from django.urls import path

from smartcart.api.views import optimizations

urlpatterns = [
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
]
