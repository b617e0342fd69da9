from django.apps import AppConfig


class StorefrontConfig(AppConfig):
    name = "storefront"
    verbose_name = "Marketplace"

    def ready(self) -> None:
        from celery import signals as celery_signals

        # Merges the anonymous cart into the user's at every login, also logins that never
        # went through the site's URLconf (tests, admin).
        from storefront.catalog import receivers  # noqa: F401  (stored cheapest offers stay fresh)
        from storefront.observability import heartbeat, queues
        from storefront.orders import tasks as order_tasks  # noqa: F401
        from storefront.payments import receivers as payment_receivers  # noqa: F401
        from storefront.web import signals  # noqa: F401

        # Workers beat for /health/; the queue depths are read at each /metrics scrape.
        celery_signals.worker_ready.connect(heartbeat.on_worker_ready, weak=False)
        queues.metrics_register()
