"""Improve cart's pages, mounted at the site root by ``storefront.config.urls`` (dotted string)."""

from django.urls import path

from smartcart.web import views

urlpatterns = [
    path("cart/improve/", views.improve_start, name="cart_improve"),
    path("cart/improve/<int:run_id>/", views.improve_status, name="cart_improve_status"),
    path("cart/improve/<int:run_id>/apply/", views.improve_apply, name="cart_improve_apply"),
    path("cart/improve/<int:run_id>/dismiss/", views.improve_dismiss, name="cart_improve_dismiss"),
]
