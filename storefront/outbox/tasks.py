"""The outbox's Celery tasks (celery beat): the relay, and the purge of delivered messages."""

from celery import shared_task


@shared_task(name="storefront.outbox_relay", ignore_result=True, acks_late=True)
def outbox_relay_task() -> int:
    from storefront.outbox.services import outbox_relay

    return outbox_relay().delivered


@shared_task(name="storefront.outbox_messages_purge", ignore_result=True, acks_late=True)
def outbox_messages_purge_task() -> int:
    from storefront.outbox.services import outbox_messages_purge

    return outbox_messages_purge()
