"""The API's schema and docs, and the JSON 404 for every other path under ``/api/v1/``.

The root URLconf mounts each feature's ``api_urls`` (``API_URLCONFS``) under ``/api/v1/`` in
the one ``api`` namespace, so none of them has an ``app_name``; ``fallback_urlpatterns`` comes
after all of them.
"""

from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from storefront.api.fallback import NotFoundView

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
]

# Last in /api/v1/: any other path answers with the JSON error body, not an HTML page.
fallback_urlpatterns = [
    re_path(r"^.*$", NotFoundView.as_view(), name="not-found"),
]
