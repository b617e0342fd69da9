from django.contrib import admin
from django.urls import include, path

from storefront.observability import views as observability

urlpatterns = [
    path("admin/", admin.site.urls),
    path("health/", observability.health, name="health"),
    path("health/live", observability.liveness, name="health-live"),
    path("metrics", observability.metrics, name="metrics"),
    path("api/v1/", include("smartcart.api.urls")),
    path("", include("storefront.web.urls")),
]
