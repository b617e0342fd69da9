"""Prometheus gauge of the outbox: messages waiting (pending) and given up (failed), read at
each scrape, so a broker outage's backlog and its draining show on the dashboard."""

import logging

from django.db import DatabaseError
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from storefront.observability.collectors import collector_register_once

logger = logging.getLogger(__name__)


def _family() -> GaugeMetricFamily:
    return GaugeMetricFamily(
        "storefront_outbox_messages",
        "Outbox messages not delivered yet, by status (pending: waiting for the broker or a "
        "retry; failed: given up, retry them in the admin).",
        labels=["status"],
    )


class OutboxBacklogCollector(Collector):
    def describe(self):
        return [_family()]

    def collect(self):
        from storefront.outbox.selectors import outbox_backlog

        family = _family()
        try:
            for status, count in sorted(outbox_backlog().items()):
                family.add_metric([status], float(count))
        except DatabaseError:
            logger.warning("Outbox backlog unavailable: the database did not answer")
        yield family


def metrics_register() -> None:
    collector_register_once(OutboxBacklogCollector)
