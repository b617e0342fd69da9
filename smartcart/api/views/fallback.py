from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.views import APIView

from storefront.errors import NotFound


@extend_schema(exclude=True)
class NotFoundView(APIView):
    """Unknown paths under ``/api/v1/`` get the API's JSON 404, whatever the method."""

    authentication_classes = []
    permission_classes = [AllowAny]

    def http_method_not_allowed(self, request, *args, **kwargs):
        raise NotFound("There is no such API endpoint.", code="endpoint_not_found")

    get = post = put = patch = delete = http_method_not_allowed
