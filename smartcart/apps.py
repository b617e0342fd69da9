from django.apps import AppConfig


class SmartcartConfig(AppConfig):
    name = "smartcart"
    verbose_name = "Smart cart"

    def ready(self) -> None:
        from celery import signals

        from smartcart import warmup
        from smartcart.pricewatch import receivers  # noqa: F401  (connects offers_changed)

        # weak=False: the handlers are module functions, but be explicit that they must live.
        signals.worker_ready.connect(warmup.on_worker_ready, weak=False)
        signals.worker_process_init.connect(warmup.on_worker_process_init, weak=False)
        warmup.web_warmup_start()

        from smartcart.metrics import metrics_register

        metrics_register()
