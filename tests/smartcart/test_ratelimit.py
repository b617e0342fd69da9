"""One Improve-cart rate limit for the API and the web page, shared through the cache."""

import pytest
from django.core.cache import cache
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from smartcart import services
from smartcart.errors import Throttled
from storefront.errors import ValidationFailed
from tests.carts import cart_with_choices
from tests.factories import CartFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_a_minute(settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "optimize": "2/min",
        },
    }
    cache.clear()
    yield
    cache.clear()


def test_the_third_request_in_a_minute_is_refused(two_a_minute, cart, shopper):
    for _ in range(2):
        services.optimization_run_create(cart=cart, requested_by=shopper)
    with pytest.raises(Throttled) as refused:
        services.optimization_run_create(cart=cart, requested_by=shopper)
    assert refused.value.http_status == 429 and refused.value.code == "throttled"
    assert 1 <= refused.value.retry_after <= 60
    # Another shopper has a budget of their own.
    other = UserFactory()
    services.optimization_run_create(cart=cart_with_choices(owner=other), requested_by=other)


def test_signed_out_shoppers_are_limited_per_cart(two_a_minute):
    cart = cart_with_choices(owner=None)
    for _ in range(2):
        services.optimization_run_create(cart=cart)
    with pytest.raises(Throttled):
        services.optimization_run_create(cart=cart)
    services.optimization_run_create(cart=cart_with_choices(owner=None))


def test_even_refused_requests_count(two_a_minute, shopper):
    empty = CartFactory(owner=shopper)
    for _ in range(2):
        with pytest.raises(ValidationFailed) as error:
            services.optimization_run_create(cart=empty, requested_by=shopper)
        assert error.value.code == "cart_empty"
    with pytest.raises(Throttled):
        services.optimization_run_create(cart=empty, requested_by=shopper)


def test_the_web_page_and_the_api_share_one_budget(two_a_minute, cart, shopper):
    # Two clicks on the web page (the view calls the same service) ...
    for _ in range(2):
        services.optimization_run_create(cart=cart, requested_by=shopper)
    # ... and the API refuses the next one, although its own DRF throttle has not counted.
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=shopper)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    response = client.post("/api/v1/cart/optimizations/", {}, format="json")
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "throttled"
    assert 1 <= int(response["Retry-After"]) <= 60


def test_no_rate_means_no_limit(settings, cart, shopper):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {}}
    for _ in range(3):
        services.optimization_run_create(cart=cart, requested_by=shopper)
