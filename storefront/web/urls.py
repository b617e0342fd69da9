from django.contrib.auth.views import PasswordResetCompleteView
from django.urls import path

# Imported for its side effect: the receiver that merges an anonymous cart at login.
from storefront.web import signals  # noqa: F401
from storefront.web.views import accounts, cart, catalog, checkout, orders

urlpatterns = [
    path("", catalog.catalog, name="catalog"),
    path("products/<slug:slug>/", catalog.product_detail, name="product"),
    path("cart/", cart.cart_detail, name="cart"),
    path("cart/add/", cart.cart_add, name="cart_add"),
    path("cart/lines/<int:line_id>/", cart.cart_line_update, name="cart_line_update"),
    path("cart/lines/<int:line_id>/remove/", cart.cart_line_delete, name="cart_line_remove"),
    path("cart/lines/<int:line_id>/switch/", cart.cart_line_switch, name="cart_line_switch"),
    path("cart/destination/", cart.cart_destination, name="cart_destination"),
    path("checkout/", checkout.checkout_address, name="checkout"),
    path("checkout/review/", checkout.checkout_review, name="checkout_review"),
    path("checkout/place/", checkout.checkout_place, name="checkout_place"),
    path("orders/", orders.order_history, name="order_list"),
    path("orders/find/", orders.order_lookup, name="order_lookup"),
    path("orders/<str:number>/", orders.order_detail, name="order_detail"),
    path("orders/<str:number>/pay/", orders.order_pay, name="order_pay"),
    path("orders/<str:number>/cancel/", orders.order_cancel_view, name="order_cancel"),
    path(
        "orders/<str:number>/packages/<int:package_id>/cancel/",
        orders.order_package_cancel,
        name="order_package_cancel",
    ),
    path("accounts/login/", accounts.ShopLoginView.as_view(), name="login"),
    path("accounts/logout/", accounts.ShopLogoutView.as_view(), name="logout"),
    path("accounts/signup/", accounts.signup, name="signup"),
    path(
        "accounts/password/reset/",
        accounts.ShopPasswordResetView.as_view(),
        name="password_reset",
    ),
    path(
        "accounts/password/reset/done/",
        accounts.ShopPasswordResetDoneView.as_view(),
        name="password_reset_done",
    ),
    path(
        "accounts/password/reset/complete/",
        PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
    path(
        "accounts/password/reset/<uidb64>/<token>/",
        accounts.ShopPasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
]
