"""The one way services hand work to Celery: by task name, durably.

Services never import task modules (tasks import services, never the other way round), so a
task is named by its registered ``name=``. ``task_enqueue_on_commit`` writes the task into the
transactional outbox (``storefront.outbox``) in the caller's transaction and sends it once that
commits; ``task_enqueue`` sends at once and keeps the task in the outbox only when the broker
refuses it. Either way a broker outage never reaches the request, and the relay sends the task
once the broker is back. Tasks sent this way are idempotent: delivery is at least once.

With ``CELERY_TASK_ALWAYS_EAGER`` (no Redis: the embedded default and the tests) the task runs
in-process after the commit, exactly as ``.delay()`` did.
"""

import logging
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.db import transaction

from storefront.outbox.sending import task_by_name, task_send, tasks_run_in_process
from storefront.outbox.services import (
    outbox_message_create,
    outbox_message_deliver,
    outbox_relay_in_process,
)

__all__ = ["task_enqueue", "task_enqueue_on_commit", "tasks_run_in_process"]

logger = logging.getLogger(__name__)


def task_enqueue(
    name: str,
    /,
    *,
    args: Sequence[Any] | None = None,
    kwargs: dict[str, Any] | None = None,
    queue: str | None = None,
    countdown: float | None = None,
    durable: bool = True,
    coalesce: bool = False,
) -> None:
    """Sends the task now (run in-process when Celery is eager, its errors raised). Only the
    options given are passed on, so the task's own defaults (its queue, no countdown) apply.

    A broker that refuses the task: ``durable``, it is kept in the outbox and sent by the
    relay; else the error is raised, for a caller that fails its own job instead.
    ``coalesce``: the task drains whatever is recorded, so one kept copy is enough."""
    task_by_name(name)  # an unknown name is a bug, raised in every mode
    try:
        task_send(name, args=args, kwargs=kwargs, queue=queue, countdown=countdown)
    except Exception as error:
        if not durable or tasks_run_in_process():
            raise
        logger.warning("Broker refused %s; kept in the outbox", name, exc_info=True)
        outbox_message_create(
            task_name=name,
            args=args,
            kwargs=kwargs,
            queue=queue,
            countdown=countdown,
            coalesce=coalesce,
            due_in_s=settings.OUTBOX_RETRY_FIRST_S,
            error=error,
        )


def task_enqueue_on_commit(
    name: str,
    /,
    *,
    args: Sequence[Any] | None = None,
    kwargs: dict[str, Any] | None = None,
    queue: str | None = None,
    countdown: float | None = None,
    using: str | None = None,
    coalesce: bool = False,
) -> None:
    """Writes the task into the outbox in the current transaction and sends it once that
    commits (at once outside one), so a worker never sees rows that are not there yet, a
    rolled-back write sends nothing, and a committed one is sent even if the broker is down
    (by the relay, later). Nothing raises into the caller after its commit."""
    task_by_name(name)
    message = outbox_message_create(
        task_name=name,
        args=args,
        kwargs=kwargs,
        queue=queue,
        countdown=countdown,
        coalesce=coalesce,
        using=using,
    )
    if message is None:
        return  # a pending message already sends this work

    def deliver() -> None:
        outbox_message_deliver(message=message, using=using)
        if tasks_run_in_process():
            outbox_relay_in_process()

    transaction.on_commit(deliver, using=using, robust=True)
