"""Prometheus gauge of the Celery queues' depths, read from Redis at each scrape (kombu keeps
each queue as a Redis list named after it)."""

import logging

import redis
from django.conf import settings
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from storefront.observability.collectors import collector_register_once

logger = logging.getLogger(__name__)

QUEUES = ("cpu", "gpu")


def _family() -> GaugeMetricFamily:
    return GaugeMetricFamily(
        "smartcart_celery_queue_depth", "Jobs waiting in a Celery queue.", labels=["queue"]
    )


class QueueDepthCollector(Collector):
    def describe(self):
        return [_family()]

    def collect(self):
        family = _family()
        url = settings.CELERY_BROKER_URL
        if url.startswith("redis"):
            client = redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1)
            try:
                for queue in QUEUES:
                    family.add_metric([queue], float(client.llen(queue)))
            except redis.RedisError:
                logger.warning("Queue depths unavailable: Redis did not answer", exc_info=True)
            finally:
                client.close()
        yield family


def metrics_register() -> None:
    collector_register_once(QueueDepthCollector)
