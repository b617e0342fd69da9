"""Beat runs every periodic job the money and the outbox rely on, and each names a real task."""

from celery import current_app
from django.conf import settings


def test_every_periodic_job_is_scheduled():
    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert {
        "storefront.refunds_due_process",
        "storefront.outbox_relay",
        "storefront.orders_unpaid_expire",
        "smartcart.optimization_runs_reap",
    } <= scheduled


def test_every_scheduled_task_exists():
    current_app.loader.import_default_modules()
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        assert entry["task"] in current_app.tasks, entry["task"]
