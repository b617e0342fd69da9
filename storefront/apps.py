from django.apps import AppConfig


class StorefrontConfig(AppConfig):
    name = "storefront"
    verbose_name = "Marketplace"

    def ready(self) -> None:
        from celery import signals as celery_signals

        # Receivers (stored cheapest offers and page-cache versions stay fresh, payments are
        # followed; web.signals merges the anonymous cart into the user's at every login, also
        # logins that never went through the site's URLconf) and each concern's task module
        # (Celery's autodiscovery looks for ``storefront.tasks`` only).
        from storefront.accounts import tasks as account_tasks  # noqa: F401
        from storefront.catalog import receivers  # noqa: F401
        from storefront.catalog import tasks as catalog_tasks  # noqa: F401
        from storefront.imports import tasks as import_tasks  # noqa: F401
        from storefront.observability import heartbeat, queues
        from storefront.orders import tasks as order_tasks  # noqa: F401
        from storefront.payments import receivers as payment_receivers  # noqa: F401
        from storefront.security import tasks as security_tasks  # noqa: F401
        from storefront.web import signals  # noqa: F401

        # Workers beat for /health/; the queue depths are read at each /metrics scrape.
        celery_signals.worker_ready.connect(heartbeat.on_worker_ready, weak=False)
        queues.metrics_register()
