"""Celery tasks of the catalog: thin wrappers that take ids and call services.

Both are idempotent, so ``acks_late`` with ``reject_on_worker_lost`` is safe: a job whose
worker died is delivered again and continues where the database says it stopped (the import
at its first uncommitted batch, the recompute at the refreshes still pending).

Settings (optional, read with defaults): ``OFFER_IMPORT_TIME_LIMIT_S`` (3600) and
``STOREFRONT_CHEAPEST_TIME_LIMIT_S`` (900) replace the project-wide Celery time limits, which
are sized for shopper-facing jobs, not for million-row feeds.
"""

import logging
from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError

from storefront.accounts import services as accounts
from storefront.catalog import cheapest
from storefront.errors import Conflict
from storefront.imports import services as imports

logger = logging.getLogger(__name__)

_IMPORT_LIMIT = settings.OFFER_IMPORT_TIME_LIMIT_S
_CHEAPEST_LIMIT = settings.STOREFRONT_CHEAPEST_TIME_LIMIT_S
_BUSY_RETRY_S = 30

# Tasks that send a mail (the reset link, ``storefront.orders.tasks``' order confirmation):
# a mail server that is down or slow is tried again later rather than the mail lost.
MAIL_TASK_OPTIONS: dict[str, Any] = {
    "acks_late": True,
    "reject_on_worker_lost": True,
    "ignore_result": True,
    "autoretry_for": (OSError,),
    "retry_backoff": True,
    "retry_backoff_max": 300,
    "max_retries": 5,
}


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


@shared_task(
    name="storefront.catalog_cheapest_recompute",
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    retry_backoff_max=30,
    max_retries=5,
    time_limit=_CHEAPEST_LIMIT,
    soft_time_limit=max(_CHEAPEST_LIMIT - 30, 1),
)
def catalog_cheapest_recompute_task(
    product_ids: list[int] | None = None, all_products: bool = False
) -> None:
    """Stores the cheapest offer of the given products, of all products, or (by default) of
    every product with a pending refresh."""
    cheapest.catalog_cheapest_recompute(product_ids=product_ids, all_products=all_products)


@shared_task(name="storefront.password_reset_mail_send", **MAIL_TASK_OPTIONS)
def password_reset_mail_send_task(
    email: str, domain: str, use_https: bool, link_valid_for: str
) -> None:
    """Mails the reset link (``password_reset_mail_send``). Takes the address, not a token:
    the worker makes the token, so no secret sits in the broker."""
    accounts.password_reset_mail_send(
        email=email,
        domain=domain,
        use_https=use_https,
        extra_context={"link_valid_for": link_valid_for},
    )


@shared_task(name="storefront.idempotency_keys_purge", ignore_result=True, acks_late=True)
def idempotency_keys_purge_task() -> int:
    from storefront.security.idempotency import idempotency_keys_purge

    return idempotency_keys_purge()
