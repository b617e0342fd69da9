"""Writing, delivering and relaying outbox messages.

A message is written in the transaction that causes it and sent once that commits. The writer
holds it for ``OUTBOX_CLAIM_S`` (its ``next_attempt_at`` lies that far ahead) and sends it
right after the commit; a send that fails is rescheduled with backoff, and the relay sends
whatever is due: retries, and messages whose writer died before sending. Delivery is at least
once, so every task sent this way is idempotent.
"""

import hashlib
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from storefront.outbox.models import OutboxMessage
from storefront.outbox.sending import task_send, tasks_run_in_process

logger = logging.getLogger(__name__)

_PENDING = OutboxMessage.Status.PENDING


@dataclass(frozen=True)
class RelayResult:
    delivered: int = 0
    failed: int = 0


def _coalesce_key(name: str, args: list[Any], kwargs: dict[str, Any], queue: str) -> str:
    body = json.dumps([name, args, kwargs, queue], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(body.encode()).hexdigest()


def _retry_delay(attempts: int) -> float:
    first, cap = settings.OUTBOX_RETRY_FIRST_S, settings.OUTBOX_RETRY_MAX_S
    return float(min(cap, first * 2 ** min(max(attempts - 1, 0), 30)))


def outbox_message_create(
    *,
    task_name: str,
    args: Sequence[Any] | None = None,
    kwargs: dict[str, Any] | None = None,
    queue: str | None = None,
    countdown: float | None = None,
    coalesce: bool = False,
    due_in_s: float | None = None,
    error: Exception | None = None,
    using: str | None = None,
) -> OutboxMessage | None:
    """Writes a message in the caller's transaction (``using``). It is due ``due_in_s`` from
    now (by default after ``OUTBOX_CLAIM_S``: the caller sends it itself once it commits).

    ``coalesce``: the task drains whatever is recorded, so one pending message with the same
    name and arguments covers this one; ``None`` when such a message was pending already.
    ``error``: the send already tried and failed (counted as the first attempt)."""
    now = timezone.now()
    due_in = settings.OUTBOX_CLAIM_S if due_in_s is None else due_in_s
    message = OutboxMessage(
        task_name=task_name,
        args=list(args or ()),
        kwargs=dict(kwargs or {}),
        queue=queue or "",
        run_after=now + timedelta(seconds=countdown) if countdown else None,
        next_attempt_at=now + timedelta(seconds=due_in),
        created_at=now,
        attempts=0 if error is None else 1,
        last_error="" if error is None else _error_text(error),
    )
    if not coalesce:
        message.save(using=using)
        return message
    message.coalesce_key = _coalesce_key(task_name, message.args, message.kwargs, message.queue)
    try:
        with transaction.atomic(using=using):
            message.save(using=using)
    except IntegrityError:
        return None  # one is pending: it sends the same work
    return message


def _error_text(error: Exception) -> str:
    return f"{type(error).__name__}: {error}"[:2000]


def _countdown_left(run_after: datetime | None) -> float | None:
    if run_after is None:
        return None
    return max(0.0, (run_after - timezone.now()).total_seconds())


def _failure_record(*, message: OutboxMessage, error: Exception, using: str | None) -> None:
    attempts = message.attempts + 1
    # In-process, the task itself raised: a bug or bad data may never go away. A broker that
    # is down comes back: its messages are never given up.
    give_up = tasks_run_in_process() and attempts >= settings.OUTBOX_MAX_ATTEMPTS
    delay = _retry_delay(attempts)
    logger.warning(
        "Outbox message %s (%s) not delivered, attempt %s%s",
        message.pk,
        message.task_name,
        attempts,
        ": giving up" if give_up else f", next in {delay:.0f} s",
        exc_info=error,
    )
    try:
        OutboxMessage.objects.using(using).filter(pk=message.pk, status=_PENDING).update(
            status=OutboxMessage.Status.FAILED if give_up else _PENDING,
            # A given-up message no longer covers new work of its kind.
            coalesce_key="" if give_up else message.coalesce_key,
            attempts=attempts,
            last_error=_error_text(error),
            next_attempt_at=timezone.now() + timedelta(seconds=delay),
        )
    except Exception:
        # The task broke this connection's transaction: the claim lapses and the relay
        # tries again.
        logger.exception("Could not record the failure of outbox message %s", message.pk)


def outbox_message_deliver(*, message: OutboxMessage, using: str | None = None) -> bool:
    """Sends a message its caller holds (just written, or claimed by the relay) and records
    the outcome. Never raises: a broker error or, in-process, the task's own error is recorded
    on the row and retried later."""
    try:
        task_send(
            message.task_name,
            args=message.args,
            kwargs=message.kwargs,
            queue=message.queue or None,
            countdown=_countdown_left(message.run_after),
        )
    except Exception as error:
        _failure_record(message=message, error=error, using=using)
        return False
    try:
        OutboxMessage.objects.using(using).filter(pk=message.pk, status=_PENDING).update(
            status=OutboxMessage.Status.DELIVERED,
            attempts=message.attempts + 1,
            delivered_at=timezone.now(),
        )
    except Exception:
        # Sent, not recorded: the relay sends it again once the claim lapses (at least once).
        logger.exception("Could not record the delivery of outbox message %s", message.pk)
    return True


def _claim(*, limit: int, using: str | None) -> list[OutboxMessage]:
    now = timezone.now()
    with transaction.atomic(using=using):
        batch = list(
            OutboxMessage.objects.using(using)
            .select_for_update(skip_locked=True)
            .filter(status=_PENDING, next_attempt_at__lte=now)
            .order_by("next_attempt_at", "pk")[:limit]
        )
        if batch:
            OutboxMessage.objects.using(using).filter(pk__in=[m.pk for m in batch]).update(
                next_attempt_at=now + timedelta(seconds=settings.OUTBOX_CLAIM_S)
            )
    return batch


def _release(*, messages: list[OutboxMessage], using: str | None) -> None:
    """Hands claimed, untried messages back to the next relay run."""
    if messages:
        OutboxMessage.objects.using(using).filter(
            pk__in=[m.pk for m in messages], status=_PENDING
        ).update(next_attempt_at=timezone.now() + timedelta(seconds=settings.OUTBOX_RETRY_FIRST_S))


def outbox_relay(*, limit: int | None = None, using: str | None = None) -> RelayResult:
    """Sends the messages that are due, oldest first, ``limit`` at most
    (``OUTBOX_RELAY_BATCH``). Concurrent relays take disjoint batches (``SKIP LOCKED``). With
    a broker, the first send that fails ends the run: the broker is down, and the rest would
    only wait for it one by one."""
    batch = _claim(limit=limit or settings.OUTBOX_RELAY_BATCH, using=using)
    delivered = failed = 0
    for index, message in enumerate(batch):
        if outbox_message_deliver(message=message, using=using):
            delivered += 1
            continue
        failed += 1
        if not tasks_run_in_process():
            _release(messages=batch[index + 1 :], using=using)
            break
    if delivered or failed:
        logger.info("Outbox relay: %s delivered, %s failed", delivered, failed)
    return RelayResult(delivered=delivered, failed=failed)


_last_in_process_relay = 0.0


def outbox_relay_in_process() -> RelayResult:
    """Without a broker there is no beat: the relay runs here instead, after a message is
    sent, at most once per ``OUTBOX_RELAY_EVERY_S`` in this process and for a small batch."""
    global _last_in_process_relay
    now = time.monotonic()
    if now - _last_in_process_relay < settings.OUTBOX_RELAY_EVERY_S:
        return RelayResult()
    _last_in_process_relay = now
    try:
        return outbox_relay(limit=10)
    except Exception:
        logger.exception("The in-process outbox relay failed")
        return RelayResult()


def outbox_messages_retry(*, message_ids: Sequence[int]) -> RelayResult:
    """Sends the given undelivered messages now (the admin's "retry now"), failed ones too."""
    OutboxMessage.objects.filter(pk__in=list(message_ids)).exclude(
        status=OutboxMessage.Status.DELIVERED
    ).update(status=_PENDING, next_attempt_at=timezone.now())
    delivered = failed = 0
    with transaction.atomic():
        batch = list(
            OutboxMessage.objects.select_for_update(skip_locked=True).filter(
                pk__in=list(message_ids), status=_PENDING
            )
        )
        OutboxMessage.objects.filter(pk__in=[m.pk for m in batch]).update(
            next_attempt_at=timezone.now() + timedelta(seconds=settings.OUTBOX_CLAIM_S)
        )
    for message in batch:
        if outbox_message_deliver(message=message):
            delivered += 1
        else:
            failed += 1
    return RelayResult(delivered=delivered, failed=failed)


def outbox_messages_purge(*, older_than_s: float | None = None) -> int:
    """Deletes delivered messages older than the retention (``OUTBOX_RETENTION_S``)."""
    keep = settings.OUTBOX_RETENTION_S if older_than_s is None else older_than_s
    cutoff = timezone.now() - timedelta(seconds=keep)
    deleted, _ = OutboxMessage.objects.filter(
        status=OutboxMessage.Status.DELIVERED, delivered_at__lt=cutoff
    ).delete()
    return deleted
