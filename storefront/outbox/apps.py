from django.apps import AppConfig


class OutboxConfig(AppConfig):
    name = "storefront.outbox"
    label = "outbox"
    verbose_name = "Outbox"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from storefront.outbox import metrics

        metrics.metrics_register()
