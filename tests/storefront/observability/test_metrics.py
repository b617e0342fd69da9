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
