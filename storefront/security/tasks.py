"""The security package's Celery task: stored idempotency keys purged (celery beat)."""

from celery import shared_task


@shared_task(name="storefront.idempotency_keys_purge", ignore_result=True, acks_late=True)
def idempotency_keys_purge_task() -> int:
    from storefront.security.idempotency import idempotency_keys_purge

    return idempotency_keys_purge()
