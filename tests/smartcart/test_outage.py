"""Issue 15, "Redis down": with the cache and the broker (one Redis) gone, the cart API and
page, product pages, Improve cart and ``POST auth/token/`` keep answering, limits fail in
their documented direction, and nothing is written before an error the client retries.

The Redis is a private ``redis-server`` this test starts and stops (``tests.redis_server``).
"""

import pytest
from django.test import override_settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from smartcart.models import OptimizationRun
from smartcart.routing import broker_state_forget
from storefront.caching.cache import cache_outage_forget
from storefront.models import CartLine
from tests.carts import cart_with_choices
from tests.factories import OfferFactory, ProductFactory, UserFactory
from tests.redis_server import private_redis, redis_down  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db


@pytest.fixture
def redis_gone(redis_down):  # noqa: F811
    """``redis_down``, with no broker probe remembered from before it stopped."""
    broker_state_forget()
    yield redis_down
    broker_state_forget()


def _api(user) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def test_token_endpoint_answers_with_redis_down(redis_gone):
    UserFactory(username="bob", password="pass-for-bob-1")
    response = APIClient().post(
        "/api/v1/auth/token/", {"username": "bob", "password": "pass-for-bob-1"}, format="json"
    )
    assert response.status_code == 200, response.content
    assert response.json()["token"]


def test_cart_api_and_pages_answer_with_redis_down(redis_gone, client):
    cart = cart_with_choices()
    user = cart.owner
    api = _api(user)
    assert api.get("/api/v1/cart/").status_code == 200
    product = ProductFactory(name="Lamp")
    offer = OfferFactory(product=product)
    response = api.post("/api/v1/cart/lines/", {"offer_id": offer.pk, "quantity": 2}, format="json")
    assert response.status_code == 201, response.content
    assert CartLine.objects.get(cart=cart, offer=offer).quantity == 2
    client.force_login(user)
    assert client.get(f"/products/{product.slug}/").status_code == 200
    assert client.get("/cart/").status_code == 200


@override_settings(SMARTCART_INLINE_MAX_MS=0, SMARTCART_OUTAGE_INLINE_MAX_MS=10_000)
def test_improve_solves_a_small_cart_in_the_request_with_the_broker_down(redis_gone):
    cart = cart_with_choices()
    response = _api(cart.owner).post("/api/v1/cart/optimizations/", {}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["status"] == "done"
    assert body["route"] == "inline"


@override_settings(SMARTCART_INLINE_MAX_MS=0, SMARTCART_OUTAGE_INLINE_MAX_MS=10_000)
def test_finding_the_broker_down_costs_one_short_try(redis_gone, monkeypatch):
    """The probe tries once with its short timeouts: kombu's retry loop sleeps two seconds
    before its first retry (the old availability probe went through it: 2.1 s per outage
    answer on a refused connection)."""
    import kombu.utils.functional

    slept = []
    monkeypatch.setattr(kombu.utils.functional, "sleep", slept.append)
    cart = cart_with_choices()
    response = _api(cart.owner).post("/api/v1/cart/optimizations/", {}, format="json")
    assert response.status_code == 201, response.content
    assert slept == []


@override_settings(SMARTCART_INLINE_MAX_MS=0, SMARTCART_OUTAGE_INLINE_MAX_MS=0)
def test_improve_answers_503_and_writes_nothing_with_the_broker_down(redis_gone, client):
    cart = cart_with_choices()
    response = _api(cart.owner).post("/api/v1/cart/optimizations/", {}, format="json")
    assert response.status_code == 503, response.content
    assert response.json()["error"]["code"] == "optimizer_unavailable"
    assert int(response["Retry-After"]) > 0
    client.force_login(cart.owner)
    page = client.post("/cart/improve/")
    assert page.status_code == 503
    assert b"try again" in page.content.lower()
    assert not OptimizationRun.objects.filter(cart=cart).exists()


def test_limits_fail_in_their_documented_direction(redis_gone):
    from storefront.security.ratelimit import window_retry_after

    # "local": counted in this process, so the limit still holds.
    assert window_retry_after(key="t:local", allowed=1, window_s=60) is None
    assert window_retry_after(key="t:local", allowed=1, window_s=60) is not None
    # "closed": refused while the cache is down; "open": not counted.
    assert window_retry_after(key="t:closed", allowed=5, window_s=60, on_outage="closed")
    assert window_retry_after(key="t:open", allowed=0, window_s=60, on_outage="open") is None


def test_a_zone_change_with_the_cache_down_is_seen_once_it_is_back(
    private_redis,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    from storefront.catalog import zone_index
    from storefront.catalog.shipping_selectors import shipping_rules_for_destinations
    from tests.factories import MerchantFactory, ShippingZoneFactory

    caches = {
        "default": {
            "BACKEND": "storefront.caching.cache.ResilientRedisCache",
            "LOCATION": private_redis.url(6),
            "KEY_PREFIX": "zone-test",
        }
    }
    merchant = MerchantFactory(base_fee=500)
    with override_settings(CACHES=caches):
        cache_outage_forget()
        assert shipping_rules_for_destinations(pairs=[(merchant.pk, "10115")])[0].base_fee == 500
        before = zone_index._current
        private_redis.stop()
        cache_outage_forget()
        with django_capture_on_commit_callbacks(execute=True):
            ShippingZoneFactory(merchant=merchant, postal_prefix="10", base_fee=100)
        # Down: resolved in SQL by the caller (None here), never from the old index.
        assert shipping_rules_for_destinations(pairs=[(merchant.pk, "10115")]) == [None]
        private_redis.start()
        cache_outage_forget()
        # Back, and still holding the stamp of before the change (a Redis that was only out
        # of reach), while another process still holds the index of before the change.
        from django.core.cache import cache

        cache.set(zone_index.VERSION_CACHE_KEY, before.version, timeout=None)
        zone_index._current = before
        assert shipping_rules_for_destinations(pairs=[(merchant.pk, "10115")])[0].base_fee == 100
    zone_index._current = None
    cache_outage_forget()
