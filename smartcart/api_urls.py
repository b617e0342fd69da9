"""Improve cart's REST API, mounted under ``/api/v1/`` in the ``api`` namespace by the root
URLconf (``storefront.config.urls``, by dotted string): no ``app_name`` of its own."""

from django.urls import path

from smartcart import apis

urlpatterns = [
    path(
        "cart/optimizations/",
        apis.OptimizationListView.as_view(),
        name="optimization-list",
    ),
    path(
        "cart/optimizations/<int:run_id>/",
        apis.OptimizationDetailView.as_view(),
        name="optimization-detail",
    ),
    path(
        "cart/optimizations/<int:run_id>/apply/",
        apis.OptimizationApplyView.as_view(),
        name="optimization-apply",
    ),
    path(
        "cart/optimizations/<int:run_id>/dismiss/",
        apis.OptimizationDismissView.as_view(),
        name="optimization-dismiss",
    ),
]
