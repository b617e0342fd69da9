from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("smartcart.api.urls")),
    path("", include("smartcart.pricewatch.urls")),
    path("", include("storefront.web.urls")),
]
