"""The accounts API: mobile clients trade a username and password for a token."""

from django.contrib.auth import authenticate, user_logged_in
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.authtoken.models import Token
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from storefront.api.errors import error_responses
from storefront.api.inputs import TextField, json_body, validated
from storefront.api.throttles import TokenObtainRateThrottle
from storefront.errors import ValidationFailed
from storefront.security.lockout import LoginLocked


class TokenObtainView(APIView):
    # No session or token needed to log in, and no CSRF check on a login form for apps.
    authentication_classes = []
    permission_classes = [AllowAny]
    throttle_classes = [TokenObtainRateThrottle]

    @extend_schema_serializer(component_name="TokenObtain")
    class InputSerializer(serializers.Serializer):
        username = TextField(min_length=1, max_length=150)
        password = TextField(min_length=1, max_length=128, style={"input_type": "password"})

    @extend_schema_serializer(component_name="Token")
    class OutputSerializer(serializers.Serializer):
        token = serializers.CharField(help_text="Send as `Authorization: Token <token>`.")

    @extend_schema(
        tags=["auth"],
        summary="Get your API token",
        description="Send `Authorization: Token <token>` with later requests. The same "
        "token is returned until it is revoked.",
        request=json_body(InputSerializer),
        responses={
            200: OutputSerializer,
            **error_responses(
                400, 413, 415, 429, e400="Bad input, or `invalid_credentials` (field `password`)."
            ),
        },
    )
    def post(self, request):
        data = validated(self.InputSerializer, request.data)
        user = authenticate(request, username=data["username"], password=data["password"])
        # django-axes flags the request once this client is past the failed-login limit.
        if getattr(request, "axes_locked_out", False):
            raise LoginLocked()
        if user is None or not user.is_active:
            raise ValidationFailed(
                "Unknown username or wrong password.", code="invalid_credentials", field="password"
            )
        # A token is a login: the lockout's failure count restarts, as for the web login.
        user_logged_in.send(sender=type(user), request=request, user=user)
        token, _ = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})
