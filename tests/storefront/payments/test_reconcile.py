"""reconcile_payments and the /metrics gauge: 0 on a healthy shop, the order named when a
mismatch is planted."""

import pytest
from django.core.management import call_command
from django.db.models import F

from storefront.models import Order
from storefront.payments.reconcile import payment_mismatches
from storefront.payments.services import order_payment_for
from tests.storefront.orders.conftest import place
from tests.storefront.payments.conftest import merchant_cancel, pay_with_dummy_form

pytestmark = pytest.mark.django_db


def _reconcile(capsys) -> tuple[int, str]:
    try:
        call_command("reconcile_payments")
    except SystemExit as exit_:
        return int(exit_.code or 0), capsys.readouterr().out
    return 0, capsys.readouterr().out


@pytest.fixture
def journeys(two_merchant_cart, django_capture_on_commit_callbacks):
    """Paid with a package cancelled after payment, and one left unpaid."""
    order = place(two_merchant_cart)
    with django_capture_on_commit_callbacks(execute=True):
        pay_with_dummy_form(order_payment_for(order=order))
        merchant_cancel(order.merchant_orders.order_by("pk").first())
    return order


def test_a_healthy_ledger_has_no_mismatch(journeys, capsys):
    assert _reconcile(capsys) == (0, "0 mismatch(es)\n")


def test_a_planted_mismatch_names_the_order_and_exits_1(journeys, capsys):
    # Someone "fixes" the refunded sum by hand: the events no longer agree.
    Order.objects.filter(pk=journeys.pk).update(amount_refunded=0)
    code, out = _reconcile(capsys)
    assert code == 1
    assert journeys.number in out
    assert "sums_differ" in out


def test_a_refund_given_up_is_a_mismatch_until_made(
    two_merchant_cart, django_capture_on_commit_callbacks, monkeypatch, settings
):
    from payments.dummy import DummyProvider

    from storefront.models import Refund
    from storefront.payments.refunds import refund_process, refund_retry_now

    settings.REFUND_MAX_ATTEMPTS = 1
    order = place(two_merchant_cart)
    with django_capture_on_commit_callbacks(execute=True):
        pay_with_dummy_form(order_payment_for(order=order))
    monkeypatch.setattr(DummyProvider, "refund", lambda *a, **k: 1 / 0)
    with django_capture_on_commit_callbacks(execute=True):
        merchant_cancel(order.merchant_orders.order_by("pk").first())
    refund = Refund.objects.get(order=order)
    assert refund.status == Refund.Status.FAILED
    assert [(m.order_number, m.code) for m in payment_mismatches()] == [
        (order.number, "net_differs")
    ]
    monkeypatch.undo()
    refund_retry_now(refund_id=refund.pk)
    refund_process(refund_id=refund.pk)
    assert payment_mismatches() == []


def test_the_metrics_gauge_counts_mismatches(journeys, client):
    def gauge() -> str:
        text = client.get("/metrics", REMOTE_ADDR="10.1.2.3").content.decode()
        return next(line for line in text.splitlines() if line.startswith("storefront_payment_"))

    assert gauge() == "storefront_payment_mismatches 0.0"
    Order.objects.filter(pk=journeys.pk).update(amount_captured=F("amount_captured") + 1)
    assert gauge() == "storefront_payment_mismatches 1.0"


def test_settle_refunds_money_held_since_before_the_ledger(
    two_merchant_cart, django_capture_on_commit_callbacks, capsys
):
    from storefront.models import PaymentEvent, Refund

    order = place(two_merchant_cart)
    with django_capture_on_commit_callbacks(execute=True):
        pay_with_dummy_form(order_payment_for(order=order))
    package = order.merchant_orders.order_by("pk").first()
    merchant_cancel(package)  # its refund never sent: as before the ledger
    PaymentEvent.objects.filter(refund__order=order).delete()
    Refund.objects.filter(order=order).delete()
    assert _reconcile(capsys)[0] == 1
    with django_capture_on_commit_callbacks(execute=True):
        try:
            call_command("reconcile_payments", "--settle")
        except SystemExit as exit_:
            assert exit_.code == 0
    assert "refund" in capsys.readouterr().out
    assert _reconcile(capsys) == (0, "0 mismatch(es)\n")
    order.refresh_from_db()
    assert order.amount_net == order.total - package.cost
