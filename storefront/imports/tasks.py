"""The feed import's Celery task: a thin wrapper that takes the job's id and calls the service.

Idempotent, so ``acks_late`` with ``reject_on_worker_lost`` is safe: a job whose worker died is
delivered again and continues at its first uncommitted batch. ``OFFER_IMPORT_TIME_LIMIT_S``
(3600) replaces the project-wide Celery time limits, which are sized for shopper-facing jobs,
not for million-row feeds.
"""

import logging

from celery import shared_task
from django.conf import settings

from storefront.errors import Conflict
from storefront.imports import services as imports

logger = logging.getLogger(__name__)

_IMPORT_LIMIT = settings.OFFER_IMPORT_TIME_LIMIT_S
_BUSY_RETRY_S = 30


@shared_task(
    bind=True,
    name="storefront.import_job_run",
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    time_limit=_IMPORT_LIMIT,
    soft_time_limit=max(_IMPORT_LIMIT - 30, 1),
    max_retries=None,
)
def import_job_run_task(self, job_id: int) -> None:
    try:
        imports.import_job_run(job_id=job_id)
    except Conflict as busy:
        if busy.code != "import_busy" or self.request.is_eager:
            logger.warning("Offer import %s not run: %s", job_id, busy.message)
            return
        # Another import of the same merchant is running: wait for it, never in parallel.
        raise self.retry(countdown=_BUSY_RETRY_S) from None
