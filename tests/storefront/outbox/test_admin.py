"""The outbox in the admin: filters for what waits and what failed, the error, "retry now"."""

import pytest
from celery import shared_task
from django.urls import reverse

from storefront.outbox.models import OutboxMessage
from storefront.outbox.services import outbox_message_create
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

CHANGELIST = reverse("admin:outbox_outboxmessage_changelist")
_SENT: list[int] = []


@shared_task(name="tests.outbox_admin_probe")
def _probe(value: int) -> None:
    _SENT.append(value)


@pytest.fixture
def superuser_client(client):
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    return client


def _failed(value: int) -> OutboxMessage:
    message = outbox_message_create(task_name="tests.outbox_admin_probe", args=[value])
    OutboxMessage.objects.filter(pk=message.pk).update(
        status=OutboxMessage.Status.FAILED, attempts=10, last_error="RuntimeError: smtp down"
    )
    return message


def test_failed_messages_are_listed_with_their_error(superuser_client):
    failed = _failed(1)
    outbox_message_create(task_name="tests.outbox_admin_probe", args=[2])
    page = superuser_client.get(CHANGELIST, {"status__exact": "failed"})
    assert page.status_code == 200
    assert [m.pk for m in page.context["cl"].result_list] == [failed.pk]
    assert b"RuntimeError: smtp down" in page.content
    with_error = superuser_client.get(CHANGELIST, {"error": "yes"})
    assert [m.pk for m in with_error.context["cl"].result_list] == [failed.pk]
    detail = superuser_client.get(reverse("admin:outbox_outboxmessage_change", args=[failed.pk]))
    assert detail.status_code == 200


def test_retry_now_delivers_the_selected_messages(superuser_client):
    _SENT.clear()
    failed = _failed(3)
    response = superuser_client.post(
        CHANGELIST, {"action": "retry_now", "_selected_action": [failed.pk]}, follow=True
    )
    assert response.status_code == 200
    assert b"1 delivered, 0 failed again." in response.content
    failed.refresh_from_db()
    assert failed.status == OutboxMessage.Status.DELIVERED
    assert _SENT == [3]


def test_merchant_staff_do_not_see_the_outbox(client):
    client.force_login(UserFactory(is_staff=True))
    assert client.get(CHANGELIST).status_code == 403
