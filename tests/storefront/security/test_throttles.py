"""The token endpoint's throttle counts atomically per real client address."""

import threading
import time

import pytest
from django.core.cache.backends.locmem import LocMemCache
from django.test import RequestFactory

from storefront.api.throttles import TokenObtainRateThrottle

pytestmark = pytest.mark.django_db

URL = "/api/v1/auth/token/"


def test_rotating_forwarded_for_does_not_reset_the_throttle(client, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"token": "3/min"},
    }
    settings.AXES_ENABLED = False
    codes = [
        client.post(
            URL,
            {"username": "nobody", "password": "x"},
            content_type="application/json",
            HTTP_X_FORWARDED_FOR=f"198.51.100.{n}",
        )
        for n in range(5)
    ]
    assert [r.status_code for r in codes] == [400, 400, 400, 429, 429]
    assert codes[-1].json()["error"]["code"] == "throttled"
    assert 1 <= int(codes[-1]["Retry-After"]) <= 60


def test_parallel_requests_never_exceed_the_rate(settings, monkeypatch):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"token": "10/min"},
    }
    # A slow cache read widens the window in which a read-modify-write counter races. Patched
    # on the class: each thread has its own cache object (of one shared local-memory store).
    real_get = LocMemCache.get

    def slow_get(self, *args, **kwargs):
        value = real_get(self, *args, **kwargs)
        time.sleep(0.02)  # as a network round trip would: the others read meanwhile
        return value

    monkeypatch.setattr(LocMemCache, "get", slow_get)
    request = RequestFactory().post(URL, REMOTE_ADDR="203.0.113.5")
    start = threading.Barrier(30)
    allowed = []

    def attempt():
        start.wait()
        allowed.append(TokenObtainRateThrottle().allow_request(request, None))

    threads = [threading.Thread(target=attempt) for _ in range(30)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(allowed) == 10
