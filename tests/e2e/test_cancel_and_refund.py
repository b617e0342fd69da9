"""Cancelling with money on the line, in a real browser: a merchant cancels one package in
the admin before the shopper pays, the shopper pays the lower amount with the dummy
provider, then cancels a second package on the order page after paying; the refund shows on
the order page and in that merchant's statement in the admin."""

import re

import pytest
from django.core.management import call_command
from django.urls import reverse

from storefront.models import MerchantOrder, Order, Refund
from tests.e2e.helpers import (
    add_offer_through_search,
    admin_as_merchant_staff,
    cents_of,
    checkout_fill,
    checkout_place,
    pick_improvable_offers,
)

pytestmark = pytest.mark.e2e

POSTAL_CODE = "10115"


def _place_order(page) -> str:
    """The checkout page, then place; returns the order number from the pay page's address."""
    page.goto(reverse("cart"))
    page.get_by_role("link", name="Checkout").click()
    checkout_fill(
        page, email="canceller@example.com", full_name="Cy Canceller", postal_code=POSTAL_CODE
    )
    checkout_place(page)
    return page.url.rstrip("/").split("/")[-2]


def _admin_as_staff_of(browser, live_server, package: MerchantOrder):
    username = f"e2e-staff-{package.merchant_id}"
    return admin_as_merchant_staff(browser, live_server, package.merchant, username=username)


def _merchant_cancels(admin, reason: str) -> None:
    rows = admin.locator("#result_list tbody tr")
    assert rows.count() == 1  # this merchant's package only
    admin.locator("#result_list tbody input.action-select").first.check()
    admin.locator("select[name=action]").select_option(label="Cancel (reason in the box)")
    admin.locator("input[name=text]").fill(reason)
    admin.get_by_role("button", name="Go").click()
    admin.locator(".messagelist .success").wait_for()


def test_cancel_before_and_after_paying_refund_on_the_order_and_the_statement(
    browser, live_server, page, demo_catalog, artifacts
):
    for offer in pick_improvable_offers():  # three merchants
        add_offer_through_search(page, offer)
    number = _place_order(page)
    order = Order.objects.get(number=number)
    before_payment, after_payment, kept = order.merchant_orders.order_by("pk")
    assert cents_of(page, '[data-testid="pay-amount"]') == order.total

    # 1. The first merchant cancels its package before the shopper pays.
    context, admin = _admin_as_staff_of(browser, live_server, before_payment)
    _merchant_cancels(admin, "Out of stock")
    admin.screenshot(path=artifacts / "e2e-merchant-cancelled-before-payment.png", full_page=True)
    context.close()

    # 2. The shopper pays the lower amount.
    page.reload()
    due = after_payment.cost + kept.cost
    assert cents_of(page, '[data-testid="pay-amount"]') == due
    page.screenshot(path=artifacts / "e2e-pay-lower-amount.png", full_page=True)
    page.get_by_test_id("pay").click()
    page.wait_for_url(re.compile(rf"/orders/{number}/$"))
    assert page.get_by_test_id("order-status").inner_text() == "Paid"
    assert cents_of(page, '[data-testid="order-paid"]') == due
    order.refresh_from_db()
    assert (order.status, order.amount_captured) == (Order.Status.PAID, due)

    # 3. The shopper cancels a second package after paying: it is refunded.
    package = page.locator(
        f'[data-testid="order-package"][data-merchant="{after_payment.merchant_name}"]'
    )
    package.get_by_test_id("package-cancel").click()
    page.get_by_test_id("cancel-confirm").wait_for()
    page.screenshot(path=artifacts / "e2e-cancel-confirm.png", full_page=True)
    page.get_by_test_id("cancel-confirm-button").click()
    page.wait_for_url(re.compile(rf"/orders/{number}/$"))
    page.get_by_text(f"The package from {after_payment.merchant_name} is cancelled").wait_for()
    refund = page.locator('[data-testid="order-refund"]')
    assert refund.count() == 1
    assert refund.get_attribute("data-status") == "succeeded"
    assert refund.get_by_test_id("refund-state").inner_text() == "Refunded"
    assert cents_of(page, '[data-testid="order-refunded"]') == after_payment.cost
    assert page.get_by_test_id("order-status").inner_text() == "Paid"  # one package still live
    page.screenshot(path=artifacts / "e2e-order-refunded-1280.png", full_page=True)
    made = Refund.objects.get(order=order)
    assert (made.merchant_order_id, made.amount, made.status) == (
        after_payment.pk,
        after_payment.cost,
        Refund.Status.SUCCEEDED,
    )
    order.refresh_from_db()
    assert order.amount_captured - order.amount_refunded == kept.cost

    # 4. The refund is on that merchant's statement for this month.
    context, admin = _admin_as_staff_of(browser, live_server, after_payment)
    admin.get_by_test_id("statement-link").click()
    admin.get_by_test_id("statement").wait_for()
    assert admin.get_by_test_id("statement-merchant").inner_text() == after_payment.merchant_name
    refunds = admin.locator('[data-testid="statement-line"][data-kind="refund"]')
    assert refunds.count() == 1
    assert refunds.get_attribute("data-order") == number
    assert int(refunds.get_attribute("data-cents")) == -after_payment.cost
    assert cents_of(admin, '[data-testid="statement-refunds"]') == after_payment.cost
    sales = admin.locator(
        f'[data-testid="statement-line"][data-kind="sale"][data-order="{number}"]'
    )
    assert int(sales.get_attribute("data-cents")) == after_payment.cost
    admin.screenshot(path=artifacts / "e2e-merchant-statement.png", full_page=True)
    with admin.expect_download() as download:
        admin.get_by_test_id("statement-csv").click()
    csv_text = download.value.path().read_text()
    assert f",refund,{number},{after_payment.pk}," in csv_text
    context.close()
    # The whole demo, this journey's order included, keeps the ledger's invariant.
    call_command("reconcile_payments")  # exits non-zero on any mismatch
