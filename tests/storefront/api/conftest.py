import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from tests.carts import cart_with_choices
from tests.factories import UserFactory


@pytest.fixture(autouse=True)
def _fresh_throttles():
    # Throttle counters live in the cache; every test starts with a clean slate.
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def api():
    return APIClient()


@pytest.fixture
def client_for(db):
    """An API client authenticated as ``user`` with a token, the way mobile clients are."""
    from rest_framework.authtoken.models import Token

    def make(user):
        client = APIClient()
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        return client

    return make


@pytest.fixture
def shopper(db):
    return UserFactory(username="alice")


@pytest.fixture
def cart(shopper):
    return cart_with_choices(owner=shopper)


@pytest.fixture
def alice_api(client_for, shopper):
    return client_for(shopper)
