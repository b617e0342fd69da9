from django.urls import Resolver404, resolve
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.views import APIView

from storefront.errors import NotFound


def _with_slash_exists(path: str) -> bool:
    if path.endswith("/"):
        return False
    try:
        match = resolve(f"{path}/")
    except Resolver404:
        return False
    return match.url_name != "not-found"


@extend_schema(exclude=True)
class NotFoundView(APIView):
    """Unknown paths under ``/api/v1/`` get the API's JSON 404, whatever the method (instead
    of Django's HTML page), with a hint when only the trailing slash is missing."""

    authentication_classes = []
    permission_classes = [AllowAny]

    def http_method_not_allowed(self, request, *args, **kwargs):
        if _with_slash_exists(request.path):
            raise NotFound(
                f"There is no such API endpoint; did you mean {request.path}/ ? "
                "Every endpoint ends with a slash.",
                code="endpoint_not_found",
            )
        raise NotFound("There is no such API endpoint.", code="endpoint_not_found")

    get = post = put = patch = delete = http_method_not_allowed
