"""Prometheus gauge of orders whose money breaks the ledger's invariant, computed at each
scrape (``reconcile.payment_mismatches``), so every process reports the same figure."""

import logging

from django.db import DatabaseError
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from storefront.observability.collectors import collector_register_once

logger = logging.getLogger(__name__)


def _family() -> GaugeMetricFamily:
    return GaugeMetricFamily(
        "storefront_payment_mismatches",
        "Orders whose captured - refunded differs from their live packages' cost, or whose "
        "sums differ from their ledger events (python manage.py reconcile_payments).",
    )


class PaymentMismatchCollector(Collector):
    def describe(self):
        return [_family()]

    def collect(self):
        from storefront.payments.reconcile import payment_mismatch_count

        family = _family()
        try:
            family.add_metric([], float(payment_mismatch_count()))
        except DatabaseError:
            logger.warning("Payment mismatches unavailable: the database did not answer")
        yield family


def metrics_register() -> None:
    collector_register_once(PaymentMismatchCollector)
