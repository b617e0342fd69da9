"""One limit on placing orders for the web pages and the API: per account, per client
address for guests; 429 with Retry-After, and nothing placed."""

import time
import uuid

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.cache.backends.locmem import LocMemCache
from django.test import Client, RequestFactory
from django.urls import reverse
from rest_framework.test import APIClient

from storefront.checkout.ratelimit import order_place_ident, order_place_rate_check
from storefront.errors import Throttled
from storefront.models import Order
from storefront.security import ratelimit
from tests.factories import UserFactory
from tests.redis_server import private_redis, redis_down  # noqa: F401  (fixtures)
from tests.storefront.orders.conftest import POSTAL_CODE
from tests.storefront.orders.test_api import _fill_cart, _place, _review
from tests.storefront.orders.test_web import (  # noqa: F401  (fixtures)
    _place_form,
    cart_two_merchants,
    market,
)
from tests.storefront.orders.test_web import _review as _web_review
from tests.storefront.web.conftest import add_to_cart

pytestmark = pytest.mark.django_db


class _ClockFromWindowStart:
    """``time`` for the limiter: the test starts 1 s into a minute window and real time runs
    on from there, so however slow the machine, all of a test's attempts (seconds apart) fall
    in one window: a window that ended between the second and third attempt would let the
    third through."""

    def __init__(self) -> None:
        start = (int(time.time() // 60) + 1) * 60 + 1
        self._offset = start - time.monotonic()

    def time(self) -> float:
        return self._offset + time.monotonic()


def _private_cache(role: str) -> LocMemCache:
    # A name of its own: LocMemCache instances of one name share their entries.
    return LocMemCache(f"ratelimit-test-{role}-{uuid.uuid4().hex}", {})


@pytest.fixture
def private_fallback(monkeypatch):
    """The limiter's outage fallback is this test's own, on a clock that keeps the test in
    one window."""
    fallback = _private_cache("fallback")
    monkeypatch.setattr(ratelimit, "_local_cache", fallback)
    monkeypatch.setattr(ratelimit, "time", _ClockFromWindowStart())
    yield fallback
    fallback.clear()


@pytest.fixture
def private_limiter(monkeypatch, private_fallback):
    """The limiter counts in a cache of this test's own instead of the default one: no other
    test's counts (in this process or, on a shared Redis, another) reach it, and clearing it
    clears nobody else's."""
    counts = _private_cache("counts")
    monkeypatch.setattr(ratelimit, "cache", counts)
    yield counts
    counts.clear()


def _order_place_rate(settings, rate: str) -> None:
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "order_place": rate,
        },
    }


@pytest.fixture
def two_a_minute(settings, private_limiter):
    _order_place_rate(settings, "2/min")


def test_the_third_attempt_in_a_window_is_refused_per_ident(two_a_minute):
    for _ in range(2):
        order_place_rate_check(ident="user:1")
    with pytest.raises(Throttled) as refused:
        order_place_rate_check(ident="user:1")
    assert refused.value.http_status == 429 and 1 <= refused.value.retry_after <= 60
    order_place_rate_check(ident="user:2")  # another shopper's budget


def test_no_rate_means_no_limit(settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {}}
    for _ in range(5):
        order_place_rate_check(ident="user:1")


def test_the_web_answers_429_with_retry_after_and_places_nothing_more(
    two_a_minute,
    client,
    cart_two_merchants,  # noqa: F811
):
    form = _place_form(_web_review(client))
    client.post(reverse("checkout_place"), form)
    client.post(reverse("checkout_place"), form)  # a double click: the same order
    refused = client.post(reverse("checkout_place"), form)
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert "too often" in refused.content.decode()
    assert Order.objects.count() == 1


def _guest_review(market, offer, *, user=None):  # noqa: F811
    guest = Client()
    if user is not None:
        guest.force_login(user)
    add_to_cart(guest, offer)
    guest.post(reverse("cart_destination"), {"postal_code": POSTAL_CODE})
    return guest, _place_form(_web_review(guest))


def test_guests_are_counted_by_client_address_accounts_by_account(
    two_a_minute,
    market,  # noqa: F811
):
    for offer in market.dear_offers[:2]:  # two sessions from the same address
        guest, form = _guest_review(market, offer)
        assert guest.post(reverse("checkout_place"), form).status_code == 302
    guest, form = _guest_review(market, market.dear_offers[2])  # a fresh session
    assert guest.post(reverse("checkout_place"), form).status_code == 429
    shopper, form = _guest_review(market, market.dear_offers[2], user=UserFactory())
    assert shopper.post(reverse("checkout_place"), form).status_code == 302
    assert Order.objects.count() == 3


def test_the_api_answers_429_json_with_retry_after(two_a_minute):
    api = APIClient()
    api.force_authenticate(UserFactory())
    _fill_cart(api)
    token = _review(api)["review_token"]
    assert _place(api, token).status_code == 201
    assert _place(api, token).status_code == 201  # the same key: the same order
    refused = _place(api, token)
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert refused.json()["error"]["code"] == "throttled"
    assert Order.objects.count() == 1


def test_with_redis_down_orders_are_placed_and_counted_per_process(
    redis_down,  # noqa: F811
    private_fallback,
    settings,
):
    _order_place_rate(settings, "2/min")
    api = APIClient()
    api.force_authenticate(UserFactory())
    _fill_cart(api)
    token = _review(api)["review_token"]
    assert _place(api, token).status_code == 201
    assert _place(api, token).status_code == 201
    refused = _place(api, token)
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    assert Order.objects.count() == 1


def test_a_guest_rotating_x_forwarded_for_is_still_one_client(settings):
    """A guest is counted by ``client_ip``: a forwarded-for header from an untrusted peer is
    the client's own claim, so a new one on each request does not start a new count."""
    settings.TRUSTED_PROXIES = []
    factory = RequestFactory()
    idents = set()
    for n in range(5):
        request = factory.post("/checkout/place/", REMOTE_ADDR="203.0.113.7")
        request.META["HTTP_X_FORWARDED_FOR"] = f"198.51.100.{n}"
        request.user = AnonymousUser()
        idents.add(order_place_ident(request))
    assert len(idents) == 1


def test_order_place_counts_an_attempt_only_when_given_an_ident(two_a_minute):
    """The limit runs in the placing service when the caller names whom to count; a caller
    that passes no ident (one that counts on its own) is never counted twice."""
    from storefront.checkout.services import order_place
    from storefront.errors import ValidationFailed

    def attempt(**ident):
        # A bad idempotency key fails after the count, before anything is read or written.
        order_place(
            cart=None, user=None, address=None, review_token="", idempotency_key="bad", **ident
        )

    for _ in range(2):
        with pytest.raises(ValidationFailed):
            attempt(rate_limit_ident="user:9")
    with pytest.raises(Throttled):
        attempt(rate_limit_ident="user:9")
    for _ in range(3):
        with pytest.raises(ValidationFailed):
            attempt()
