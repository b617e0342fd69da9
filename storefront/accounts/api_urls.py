"""The accounts API's URLs (the auth token), mounted under ``/api/v1/`` in the ``api``
namespace by the root URLconf (``API_URLCONFS``)."""

from django.urls import path

from storefront.accounts.apis import TokenObtainView

urlpatterns = [
    path("auth/token/", TokenObtainView.as_view(), name="token-obtain"),
]
