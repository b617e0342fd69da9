"""The catalog's Celery task: the stored cheapest offers recomputed (a thin wrapper).

Idempotent, so ``acks_late`` with ``reject_on_worker_lost`` is safe: a recompute whose worker
died is delivered again and does the refreshes still pending. ``STOREFRONT_CHEAPEST_TIME_LIMIT_S``
(900) replaces the project-wide Celery time limits.
"""

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError

from storefront.catalog import cheapest

_CHEAPEST_LIMIT = settings.STOREFRONT_CHEAPEST_TIME_LIMIT_S


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
