"""The outbox's backlog on ``/metrics`` and the relay by hand (``manage.py outbox_relay``)."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from storefront.outbox.models import OutboxMessage
from storefront.outbox.selectors import outbox_backlog
from storefront.outbox.services import outbox_message_create

pytestmark = pytest.mark.django_db


def _pending(**fields) -> OutboxMessage:
    message = outbox_message_create(task_name="storefront.outbox_messages_purge")
    OutboxMessage.objects.filter(pk=message.pk).update(**fields)
    return message


def test_the_backlog_counts_pending_and_failed():
    assert outbox_backlog() == {"pending": 0, "failed": 0}
    _pending()
    _pending()
    _pending(status=OutboxMessage.Status.FAILED)
    _pending(status=OutboxMessage.Status.DELIVERED)
    assert outbox_backlog() == {"pending": 2, "failed": 1}


def test_metrics_show_the_backlog(client):
    _pending()
    text = client.get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode()
    assert 'storefront_outbox_messages{status="pending"} 1.0' in text
    assert 'storefront_outbox_messages{status="failed"} 0.0' in text


def test_the_command_sends_what_is_due():
    _pending(next_attempt_at=timezone.now() - timedelta(seconds=1))
    _pending()  # its writer still holds it
    out = StringIO()
    call_command("outbox_relay", stdout=out)
    assert out.getvalue().strip() == "1 delivered, 0 failed; 1 pending, 0 given up"
