"""Celery tasks: thin wrappers that take ids and call services.

``acks_late`` with ``reject_on_worker_lost``: a message is acknowledged only after the job
finished, so a worker that dies mid-job (OOM, a GPU fault, a deploy) has the broker hand the
job to another worker. The service counts attempts and makes reruns harmless. Results live
in the database; no result backend.
"""

import logging

from celery import shared_task
from django.db import InterfaceError, OperationalError, close_old_connections

from smartcart import services

# Registered with the worker along with this module (autodiscovery imports ``tasks`` only).
from smartcart.pricewatch.tasks import (  # noqa: F401
    price_watch_email_send_task,
    price_watch_run_task,
)

logger = logging.getLogger(__name__)


@shared_task(
    name="smartcart.optimization_run_execute",
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    # A database blip is worth another try (the service lets these two through and keeps
    # the run retriable); anything else is the run's recorded failure. The service's
    # attempt count (SMARTCART_MAX_ATTEMPTS) fails the run once the retries are used up.
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    retry_backoff_max=10,
    max_retries=3,
    bind=True,
)
def optimization_run_execute_task(self, run_id: int) -> None:
    if not self.request.is_eager:
        # What Django does at the start of each request: drop a connection that broke or
        # aged past CONN_MAX_AGE. Workers keep connections across tasks
        # (CELERY_DB_REUSE_MAX), so a database restart must not fail every later task.
        # Never in-process: that would close the caller's connection mid-transaction.
        close_old_connections()
    # A soft time limit inside the solver is the service's to record (a failed run).
    services.optimization_run_execute(run_id=run_id, heartbeat=not self.request.is_eager)


@shared_task(name="smartcart.optimization_runs_reap", ignore_result=True, acks_late=True)
def optimization_runs_reap_task() -> int:
    return services.optimization_runs_reap()
