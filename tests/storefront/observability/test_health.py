import time

import pytest

from storefront.observability import checks
from storefront.observability.heartbeat import HEARTBEAT_KEY, heartbeat_write

pytestmark = pytest.mark.django_db


def test_health_is_ok_when_every_check_passes(client):
    heartbeat_write(hostname="cpu@test")  # a worker is alive (checked when REDIS_URL is set)
    response = client.get("/health/")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert set(body["checks"]) == {"database", "cache", "broker", "worker"}
    assert response["Cache-Control"].startswith("max-age=0")


def test_a_failing_check_makes_it_503(client, monkeypatch):
    def cache_down():
        raise ConnectionError("Connection refused")

    monkeypatch.setitem(checks.CHECKS, "cache", cache_down)
    response = client.get("/health/")
    assert response.status_code == 503
    assert response.json()["checks"]["cache"] == {
        "ok": False,
        "detail": "ConnectionError: Connection refused",
        "ms": response.json()["checks"]["cache"]["ms"],
    }


def test_worker_heartbeat_is_required_when_checked(client, settings):
    settings.HEALTH_CHECK_WORKER = True
    assert client.get("/health/").status_code == 503
    heartbeat_write(hostname="cpu@test")
    ok = client.get("/health/")
    assert ok.status_code == 200
    assert ok.json()["checks"]["worker"]["detail"].startswith("cpu@test")


def test_a_stale_heartbeat_is_a_dead_worker(client, settings):
    from django.core.cache import cache

    settings.HEALTH_CHECK_WORKER = True
    cache.set(HEARTBEAT_KEY, {"at": time.time() - 600, "hostname": "cpu@old"})
    response = client.get("/health/")
    assert response.status_code == 503
    assert "cpu@old" in response.json()["checks"]["worker"]["detail"]


def test_liveness_checks_nothing(client, monkeypatch):
    monkeypatch.setitem(checks.CHECKS, "database", lambda: (False, "down"))
    response = client.get("/health/live")
    assert response.status_code == 200
    assert response.content == b"ok"
