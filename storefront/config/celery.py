"""The Celery application: configured from Django settings (``CELERY_*``).

Two queues: ``gpu`` is served by one ``--pool=solo`` worker per GPU (CUDA contexts do
not survive fork), ``cpu`` by ordinary prefork workers. See ``make worker-gpu`` and
``make worker-cpu``.
"""

import os
from typing import Any

from celery import Celery
from kombu import Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "storefront.config.settings.base")

app = Celery("smartcart")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_queues = (Queue("cpu"), Queue("gpu"))
app.conf.task_default_queue = "cpu"
app.autodiscover_tasks()

# Tasks that send a mail (the reset link in ``storefront.accounts.tasks``, the order
# confirmation in ``storefront.orders.tasks``): a mail server that is down or slow is tried
# again later rather than the mail lost.
MAIL_TASK_OPTIONS: dict[str, Any] = {
    "acks_late": True,
    "reject_on_worker_lost": True,
    "ignore_result": True,
    "autoretry_for": (OSError,),
    "retry_backoff": True,
    "retry_backoff_max": 300,
    "max_retries": 5,
}
