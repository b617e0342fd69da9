"""In-process tasks (no Redis): a task that fails after the commit is recorded on its outbox
row and retried, and the committed request still answers as usual."""

from datetime import timedelta
from smtplib import SMTPServerDisconnected
from unittest import mock

import pytest
from django.core import mail
from django.urls import reverse
from django.utils import timezone

from storefront.models import Order
from storefront.outbox import services as outbox
from storefront.outbox.models import OutboxMessage
from storefront.payments.services import order_payment_for
from tests.storefront.orders.conftest import place, two_merchant_cart  # noqa: F401

pytestmark = pytest.mark.django_db

DUMMY_PAID = {"status": "confirmed", "fraud_status": "accept", "gateway_response": "3ds-disabled"}


def test_paying_answers_when_the_mail_server_is_down_and_the_mail_goes_later(
    two_merchant_cart,  # noqa: F811
    client,
    django_capture_on_commit_callbacks,
    monkeypatch,
):
    monkeypatch.setattr(outbox, "_last_in_process_relay", float("inf"))
    order = place(two_merchant_cart)
    assert order_payment_for(order=order)  # created with the order
    client.force_login(two_merchant_cart.owner)
    down = SMTPServerDisconnected("Connection unexpectedly closed")
    with (
        mock.patch("storefront.orders.emails.send_mail", side_effect=down),
        django_capture_on_commit_callbacks(execute=True),
    ):
        response = client.post(reverse("order_pay", args=[order.number]), DUMMY_PAID)
    assert response.status_code == 302
    order.refresh_from_db()
    assert order.status == Order.Status.PAID
    message = OutboxMessage.objects.get(task_name="storefront.order_confirmation_mail_send")
    assert message.status == OutboxMessage.Status.PENDING
    assert "SMTPServerDisconnected" in message.last_error
    assert mail.outbox == []

    OutboxMessage.objects.update(next_attempt_at=timezone.now() - timedelta(seconds=1))
    assert outbox.outbox_relay().delivered >= 1
    assert len(mail.outbox) == 1
    assert order.number in mail.outbox[0].subject + mail.outbox[0].body
