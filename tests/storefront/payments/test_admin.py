"""The ledger in the admin: the order page shows its refunds and events, the refund list
filters failed ones and "Retry now" asks the provider again."""

import pytest
from payments.dummy import DummyProvider

from storefront.models import Refund
from storefront.payments.services import order_payment_for
from tests.factories import UserFactory
from tests.storefront.orders.conftest import place
from tests.storefront.payments.conftest import merchant_cancel, pay_with_dummy_form

pytestmark = pytest.mark.django_db


@pytest.fixture
def failed_refund(two_merchant_cart, django_capture_on_commit_callbacks, monkeypatch, settings):
    settings.REFUND_MAX_ATTEMPTS = 1
    order = place(two_merchant_cart)
    with django_capture_on_commit_callbacks(execute=True):
        pay_with_dummy_form(order_payment_for(order=order))
    with monkeypatch.context() as patch:
        patch.setattr(DummyProvider, "refund", lambda *a, **k: 1 / 0)
        with django_capture_on_commit_callbacks(execute=True):
            merchant_cancel(order.merchant_orders.order_by("pk").first())
    return Refund.objects.get(order=order)


@pytest.fixture
def admin_client(client):
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    return client


def test_the_order_page_shows_its_refunds_and_ledger(admin_client, failed_refund):
    order = failed_refund.order
    page = admin_client.get(f"/admin/storefront/order/{order.pk}/change/").content.decode()
    assert "ZeroDivisionError" in page
    assert "Refund requested" in page and "Captured" in page
    assert "Held (captured - refunded)" in page


def test_failed_refunds_are_listed_and_retried_now(
    admin_client, failed_refund, settings, django_capture_on_commit_callbacks
):
    settings.REFUND_MAX_ATTEMPTS = 5
    listed = admin_client.get("/admin/storefront/refund/?status__exact=failed")
    assert failed_refund.order.number in listed.content.decode()
    assert (
        admin_client.get("/admin/storefront/refund/?status__exact=pending")
        .context["cl"]
        .result_count
        == 0
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            "/admin/storefront/refund/",
            {"action": "retry_now", "_selected_action": [failed_refund.pk]},
            follow=True,
        )
    assert response.status_code == 200
    failed_refund.refresh_from_db()
    assert failed_refund.status == Refund.Status.SUCCEEDED
    assert admin_client.get("/admin/storefront/paymentevent/").status_code == 200
