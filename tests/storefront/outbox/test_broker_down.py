"""With the real broker (a private ``redis-server``) stopped, a committed write's task is kept
and nothing raises after the commit; once the server is back the relay publishes it, once."""

import time
from datetime import timedelta

import pytest
import redis
from django.utils import timezone

from storefront.enqueue import task_enqueue_on_commit
from storefront.outbox.models import OutboxMessage
from storefront.outbox.services import RelayResult, outbox_relay
from tests.redis_server import broker_pools_drop, private_redis, redis_down  # noqa: F401

pytestmark = pytest.mark.django_db


def test_a_task_enqueued_while_redis_is_down_is_published_when_it_returns(
    redis_down,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    started = time.monotonic()
    with django_capture_on_commit_callbacks(execute=True):
        task_enqueue_on_commit("storefront.outbox_messages_purge")
    elapsed = time.monotonic() - started
    message = OutboxMessage.objects.get()
    assert message.status == OutboxMessage.Status.PENDING
    assert message.attempts == 1 and message.last_error
    assert elapsed < 5, f"the refused publish held the commit for {elapsed:.1f} s"

    redis_down.start()
    broker_pools_drop()
    OutboxMessage.objects.update(next_attempt_at=timezone.now() - timedelta(seconds=1))
    assert outbox_relay() == RelayResult(delivered=1, failed=0)
    assert outbox_relay() == RelayResult()
    queued = redis.Redis(port=redis_down.port, db=6).llen("cpu")
    assert queued == 1
