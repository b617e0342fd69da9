from django.urls import path

from smartcart.pricewatch import web

urlpatterns = [
    path("cart/price-watch/email/", web.price_watch_email, name="price_watch_email"),
    path(
        "price-watch/unsubscribe/<str:token>/",
        web.price_watch_unsubscribe_view,
        name="price_watch_unsubscribe",
    ),
]
