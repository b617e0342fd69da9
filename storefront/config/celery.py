"""The Celery application: configured from Django settings (``CELERY_*``).

Two queues: ``gpu`` is served by one ``--pool=solo`` worker per GPU (CUDA contexts do
not survive fork), ``cpu`` by ordinary prefork workers. See ``make worker-gpu`` and
``make worker-cpu``.
"""

import os

from celery import Celery
from kombu import Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "storefront.config.settings.base")

app = Celery("smartcart")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_queues = (Queue("cpu"), Queue("gpu"))
app.conf.task_default_queue = "cpu"
app.autodiscover_tasks()
