"""The page-cache middleware: a visitor with nothing of their own gets the whole cached page
or API list in one cache round trip, before sessions, CSRF, auth and axes run; never a stale
one; the same headers as a rendered one; a CSRF token and cookie of their own."""

import re

import pytest
from django.core.cache import caches
from django.middleware.csrf import _unmask_cipher_token
from django.test import Client, RequestFactory, override_settings
from django.urls import reverse

from storefront.caching.middleware import csrf_token_get, page_cache_memo_clear
from storefront.models import Offer
from tests.storefront.web.conftest import add_to_cart, market, shopper  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db

_OPERATIONS = ("get", "get_many", "set", "set_many", "add", "delete", "delete_many", "incr")


@pytest.fixture(autouse=True)
def _fresh_memo():
    page_cache_memo_clear()
    yield
    page_cache_memo_clear()


@pytest.fixture
def cache_calls(monkeypatch):
    """Every operation on the default cache, by name (each one a Redis round trip there)."""
    calls: list[str] = []
    inside = []  # the local-memory backend's get_many calls its own get: one operation
    backend = caches["default"]
    for name in _OPERATIONS:
        method = getattr(backend, name)

        def counted(*args, _name=name, _method=method, **kwargs):
            if not inside:
                calls.append(_name)
            inside.append(_name)
            try:
                return _method(*args, **kwargs)
            finally:
                inside.pop()

        monkeypatch.setattr(backend, name, counted)
    return calls


@pytest.fixture
def chain(monkeypatch):
    """Whether the session, CSRF-view and auth middlewares ran, per request."""
    from django.contrib.auth.middleware import AuthenticationMiddleware
    from django.contrib.sessions.middleware import SessionMiddleware

    ran: list[str] = []
    for cls in (SessionMiddleware, AuthenticationMiddleware):
        original = cls.process_request

        def process_request(self, request, _original=original, _name=cls.__name__):
            ran.append(_name)
            return _original(self, request)

        monkeypatch.setattr(cls, "process_request", process_request)
    return ran


def product_url(market) -> str:  # noqa: F811
    return reverse("product", args=[market.products[0].slug])


def get(client, url, **extra):
    response = client.get(url, **extra)
    assert response.status_code in (200, 304), response.status_code
    return response


def urls(market) -> list[str]:  # noqa: F811
    return [
        reverse("catalog"),
        product_url(market),
        reverse("api:product-list") + "?search=widget",
        reverse("api:category-list"),
    ]


def test_a_hit_is_one_cache_round_trip_and_skips_the_chain(
    market,  # noqa: F811
    cache_calls,
    chain,
    django_assert_max_num_queries,
):
    for url in urls(market):
        get(Client(), url)  # renders and stores
        cache_calls.clear()
        chain.clear()
        with django_assert_max_num_queries(0):
            response = get(Client(), url)
        assert cache_calls == ["get_many"], url
        assert chain == [], url
        assert b"Voltra Widget" in response.content or url.endswith("/categories/")


@pytest.fixture
def many_keys(monkeypatch):
    """The keys of every ``get_many`` on the default cache, per call."""
    reads: list[list[str]] = []
    backend = caches["default"]
    original = backend.get_many

    def get_many(keys, *args, **kwargs):
        reads.append(list(keys))
        return original(keys, *args, **kwargs)

    monkeypatch.setattr(backend, "get_many", get_many)
    return reads


def test_a_hit_on_this_processs_copy_reads_only_the_tokens(market, many_keys):  # noqa: F811
    for url in urls(market):
        get(Client(), url)  # renders, stores, keeps a copy
        many_keys.clear()
        get(Client(), url)
        assert len(many_keys) == 1, url
        assert all(key.startswith("pv:") for key in many_keys[0]), many_keys


def test_a_stale_copy_is_never_served(
    market,  # noqa: F811
    django_capture_on_commit_callbacks,
    many_keys,
):
    url = product_url(market)
    get(Client(), url)
    get(Client(), url)  # a hit on the copy
    offer = market.cheap_offers[0]
    with django_capture_on_commit_callbacks(execute=True):
        offer.unit_price = 2111
        offer.save()
    many_keys.clear()
    assert "€21.11" in get(Client(), url).content.decode()
    # The copy's tokens failed, then the shared entry's: rendered again.
    assert any(any(key.startswith("pe:") for key in keys) for keys in many_keys)


def test_a_copy_lives_no_longer_than_the_shared_entry(
    market,  # noqa: F811
    many_keys,
    monkeypatch,
):
    import storefront.caching.middleware as middleware

    url = product_url(market)
    start = middleware._clock()
    get(Client(), url)  # rendered and stored at start: the shared entry expires at start + 600
    # Another process copies it late in its life: the copy expires with it, not 600 s later.
    page_cache_memo_clear()
    get(Client(), url)  # learns the URL's versions (a miss or a shared hit)
    monkeypatch.setattr(middleware, "_clock", lambda: start + 590)
    get(Client(), url)  # a hit: copies the shared entry
    many_keys.clear()
    get(Client(), url)
    assert all(key.startswith("pv:") for key in many_keys[0])  # served from the copy
    monkeypatch.setattr(middleware, "_clock", lambda: start + 601)
    many_keys.clear()
    get(Client(), url)
    assert any(key.startswith("pe:") for key in many_keys[0])  # the copy was not used


def test_large_pages_are_not_copied(market, many_keys, monkeypatch):  # noqa: F811
    import storefront.caching.middleware as middleware

    monkeypatch.setattr(middleware, "_LOCAL_MAX_BYTES", 10)
    url = product_url(market)
    get(Client(), url)
    many_keys.clear()
    get(Client(), url)
    assert any(key.startswith("pe:") for key in many_keys[0])


@override_settings(PAGE_CACHE_LOCAL_ENTRIES=1)
def test_copies_are_bounded(market):  # noqa: F811
    from storefront.caching.middleware import _local

    for url in urls(market):
        get(Client(), url)
        get(Client(), url)
        assert len(_local) == 1


@override_settings(PAGE_CACHE_LOCAL_ENTRIES=0)
def test_no_copies_reads_every_page_from_the_cache(market, many_keys):  # noqa: F811
    url = product_url(market)
    get(Client(), url)
    many_keys.clear()
    get(Client(), url)
    assert any(key.startswith("pe:") for key in many_keys[0])


def test_a_hit_has_the_rendered_responses_headers(market):  # noqa: F811
    for url in urls(market):
        rendered = get(Client(), url)
        served = get(Client(), url)
        for name in ("Content-Type", "X-Frame-Options", "Vary", "Allow", "ETag", "Cache-Control"):
            assert served.get(name) == rendered.get(name), (url, name)
        for name in ("X-Content-Type-Options", "Referrer-Policy", "Cross-Origin-Opener-Policy"):
            assert served.get(name) == rendered.get(name), (url, name)
        assert served["Content-Length"] == str(len(served.content))
        # A page's only per-request part is its CSRF token; a list is the same bytes.
        if url.startswith("/api/"):
            assert served.content == rendered.content
        else:
            strip = re.compile(rb'name="csrfmiddlewaretoken" value="[^"]+"')
            assert strip.sub(b"", served.content) == strip.sub(b"", rendered.content)


def test_a_price_change_shows_on_the_next_hit(
    market,  # noqa: F811
    django_capture_on_commit_callbacks,
    cache_calls,
):
    offer = market.cheap_offers[0]
    url = product_url(market)
    get(Client(), url)
    assert "€22.00" in get(Client(), url).content.decode()  # a hit
    with django_capture_on_commit_callbacks(execute=True):
        offer.unit_price = 2111
        offer.save()
    html = get(Client(), url).content.decode()
    assert "€21.11" in html
    assert "€22.00" not in html
    cache_calls.clear()
    assert "€21.11" in get(Client(), url).content.decode()
    assert cache_calls == ["get_many"]  # stored again, and a hit again


def test_a_version_lost_from_the_cache_is_never_a_hit(market):  # noqa: F811
    url = product_url(market)
    get(Client(), url)
    caches["default"].delete("pv:shared")
    Offer.objects.filter(pk=market.cheap_offers[0].pk).update(unit_price=1234)  # no bump
    # The version is gone, so the entry cannot prove it is current: rendered again.
    assert "€12.34" in get(Client(), url).content.decode()


def test_csrf_tokens_work_and_are_each_visitors_own(market):  # noqa: F811
    url = product_url(market)
    get(Client(), url)
    visitor = Client(enforce_csrf_checks=True)
    html = get(visitor, url).content.decode()
    assert "csrfSHAREDFRAGMENTmarker" not in html
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    cookie = visitor.cookies["csrftoken"].value
    assert _unmask_cipher_token(token) == cookie
    # The same visitor again: the same secret (open tabs keep working), a fresh mask.
    again = get(visitor, url).content.decode()
    token_again = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', again).group(1)
    assert token_again != token
    assert _unmask_cipher_token(token_again) == cookie
    response = visitor.post(
        reverse("cart_add"),
        {"offer": market.cheap_offers[0].pk, "quantity": 1, "csrfmiddlewaretoken": token},
    )
    assert response.status_code == 302
    other = get(Client(), url).content.decode()
    assert token not in other


def test_the_fast_csrf_token_is_djangos_format():
    request = RequestFactory().get("/")
    token = csrf_token_get(request)
    secret = request.META["CSRF_COOKIE"]
    assert len(token) == 64 and len(secret) == 32
    assert _unmask_cipher_token(token) == secret
    assert request.META["CSRF_COOKIE_NEEDS_UPDATE"]
    assert len({csrf_token_get(RequestFactory().get("/")) for _ in range(50)}) == 50


def test_visitors_with_their_own_state_are_never_served_the_shared_entry(
    client,
    market,  # noqa: F811
    shopper,  # noqa: F811
    chain,
):
    url = product_url(market)
    get(Client(), url)
    get(Client(), url)
    add_to_cart(client, market.cheap_offers[0])
    chain.clear()
    assert "In your cart" in get(client, url).content.decode()
    assert "SessionMiddleware" in chain
    signed_in = Client()
    signed_in.force_login(shopper)
    assert "alice" in get(signed_in, url).content.decode()


def test_a_token_request_is_authenticated_not_served(market, chain):  # noqa: F811
    url = reverse("api:category-list")
    get(Client(), url)
    chain.clear()
    response = Client().get(url, HTTP_AUTHORIZATION="Token not-a-token")
    assert response.status_code == 401
    assert "AuthenticationMiddleware" in chain


def test_api_conditional_requests_on_a_hit(market, cache_calls):  # noqa: F811
    url = reverse("api:product-list") + "?search=widget"
    first = get(Client(), url)
    cache_calls.clear()
    again = Client().get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304
    assert cache_calls == ["get_many"]
    assert again["ETag"] == first["ETag"]
    assert again.content == b""
    since = Client().get(url, HTTP_IF_MODIFIED_SINCE=first["Last-Modified"])
    assert since.status_code == 304


def test_the_api_format_is_negotiated_per_accept_header(market):  # noqa: F811
    url = reverse("api:product-list") + "?search=widget"
    get(Client(), url)
    get(Client(), url)
    browsable = get(Client(), url, HTTP_ACCEPT="text/html")
    assert browsable["Content-Type"].startswith("text/html")


def test_head_is_served_too(market, cache_calls):  # noqa: F811
    url = reverse("catalog")
    get(Client(), url)
    cache_calls.clear()
    assert Client().head(url).status_code == 200
    assert cache_calls == ["get_many"]


@override_settings(PAGE_CACHE=False)
def test_page_cache_off_never_serves_an_entry(market, cache_calls):  # noqa: F811
    url = reverse("catalog")
    get(Client(), url)
    get(Client(), url)
    assert "get_many" not in cache_calls


def test_carts_and_checkout_are_never_stored(market):  # noqa: F811
    for url in (reverse("cart"), reverse("checkout"), reverse("api:cart"), reverse("catalog")):
        Client().get(url)
        Client().get(url)
    stored = [key for key in caches["default"]._cache if ":pe:" in key]
    assert len(stored) == 1  # the catalog's


def test_a_failing_cache_after_a_hit_falls_back_to_rendering(market):  # noqa: F811
    url = product_url(market)
    get(Client(), url)
    get(Client(), url)  # this process now looks the URL up
    broken = {"default": {"BACKEND": "tests.storefront.web.test_page_cache.BrokenCache"}}
    with override_settings(CACHES=broken, SESSION_ENGINE="django.contrib.sessions.backends.db"):
        assert "Voltra Widget" in get(Client(), url).content.decode()


def test_without_the_middleware_pages_render_around_their_fragments(market, settings):  # noqa: F811
    settings.MIDDLEWARE = [name for name in settings.MIDDLEWARE if "cache_middleware" not in name]
    url = product_url(market)
    first = get(Client(), url).content.decode()
    assert "Voltra Widget" in first
    assert "csrfSHAREDFRAGMENTmarker" not in first
    assert "<!--slot:" not in get(Client(), url).content.decode()
