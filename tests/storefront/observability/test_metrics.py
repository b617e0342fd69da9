import pytest

pytestmark = pytest.mark.django_db


def test_metrics_show_request_latency_by_route(client):
    client.get("/api/v1/products/")
    text = client.get("/metrics").content.decode()
    assert 'django_http_requests_latency_seconds_by_view_method_count{method="GET",' in text
    assert 'view="api:product-list"' in text


def test_metrics_are_only_for_the_private_network(client):
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.4").status_code == 404
    assert client.get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 200


def test_the_allowed_networks_are_parsed_once_per_setting(client, settings, monkeypatch):
    from storefront.observability import views

    parsed = []
    real = views.ipaddress.ip_network
    monkeypatch.setattr(
        views.ipaddress, "ip_network", lambda *a, **k: parsed.append(a[0]) or real(*a, **k)
    )
    views._networks.cache_clear()
    settings.METRICS_ALLOWED_NETWORKS = ["10.0.0.0/8", "192.168.0.0/16"]
    for _ in range(3):
        assert client.get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 200
    assert parsed == ["10.0.0.0/8", "192.168.0.0/16"]
    settings.METRICS_ALLOWED_NETWORKS = ["203.0.113.0/24"]  # a changed setting is read again
    assert client.get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 404
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.4").status_code == 200
    assert parsed[2:] == ["203.0.113.0/24"]


def test_queue_depths_are_read_from_the_broker(settings, monkeypatch):
    from storefront.observability import queues

    class FakeRedis:
        def llen(self, name):
            return {"cpu": 3, "gpu": 1}[name]

        def close(self):
            pass

    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    monkeypatch.setattr(queues.redis.Redis, "from_url", lambda *a, **k: FakeRedis())
    (family,) = queues.QueueDepthCollector().collect()
    assert {s.labels["queue"]: s.value for s in family.samples} == {"cpu": 3.0, "gpu": 1.0}
