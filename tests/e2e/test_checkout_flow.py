"""The whole purchase in a real browser: search, add items from several merchants, Improve
cart, apply, the one-page checkout, pay with the dummy provider; the order page shows one
package per merchant and the total the shopper saw before paying. Then the merchant ships
its package in the admin and the shopper sees it."""

import re

import pytest
from django.core.management import call_command
from django.urls import reverse

from storefront.models import Order
from tests.e2e.conftest import DESKTOP, PHONE
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


def _fill(page) -> None:
    checkout_fill(page, email="buyer@example.com", full_name="Ada Buyer", postal_code=POSTAL_CODE)


def _checkout(page) -> int:
    """The checkout page with the address filled in; returns the total its summary shows."""
    page.get_by_role("link", name="Checkout").click()
    page.wait_for_url("**/checkout/")
    _fill(page)
    return cents_of(page, '[data-testid="summary-total"]')


def _merchant_ships(browser, live_server, order: Order, artifacts) -> str:
    package = order.merchant_orders.order_by("pk").first()
    context, admin = admin_as_merchant_staff(
        browser, live_server, package.merchant, username="e2e-merchant"
    )
    # The demo's past orders may hold packages of this merchant too: act on this order's only.
    row = admin.locator("#result_list tbody tr", has_text=order.number)
    assert row.count() == 1
    ship = "Mark shipped (tracking reference in the box)"
    for action, text in (("Accept", ""), (ship, "DHL-E2E-1")):
        row.locator("input.action-select").check()
        admin.locator("select[name=action]").select_option(label=action)
        admin.locator("input[name=text]").fill(text)
        admin.get_by_role("button", name="Go").click()
        admin.locator(".messagelist .success").wait_for()
    admin.screenshot(path=artifacts / "e2e-merchant-shipped.png", full_page=True)
    context.close()
    return package.merchant_name


def test_buy_the_improved_cart_and_see_the_merchant_ship_it(
    browser, live_server, page, demo_catalog, artifacts
):
    # The demo has past orders (kept: the ledger protects paid ones); this test reads its own.
    known = list(Order.objects.values_list("pk", flat=True))
    for offer in pick_improvable_offers():
        add_offer_through_search(page, offer)

    page.goto(reverse("cart"))
    page.get_by_role("button", name="Improve cart").click()
    page.locator('#improve[data-state="saving"]').wait_for()
    page.get_by_role("button", name=re.compile(r"^Apply and save")).click()
    page.get_by_text("Suggestion applied").wait_for()
    page.get_by_label("Postal code").fill(POSTAL_CODE)
    page.get_by_role("button", name="Save").click()
    page.get_by_text(f"Shipping now calculated for {POSTAL_CODE}").wait_for()
    merchants = page.locator("section.merchant-group").count()
    cart_total = cents_of(page, '[data-testid="cart-total"]')

    page_total = _checkout(page)
    assert page_total == cart_total
    assert page.get_by_test_id("summary-package").count() == merchants
    place = page.get_by_test_id("place-order")
    assert place.inner_text().startswith("Place order and pay")
    page.screenshot(path=artifacts / "e2e-checkout-page.png", full_page=True)
    page.set_viewport_size(PHONE)
    page.screenshot(path=artifacts / "e2e-checkout-page-390.png", full_page=True)
    page.set_viewport_size(DESKTOP)
    checkout_place(page)  # the cart is priced for this postal code: one press places it
    page.screenshot(path=artifacts / "e2e-checkout-pay.png", full_page=True)
    page.get_by_test_id("pay").click()
    page.wait_for_url(re.compile(r"/orders/[A-Z0-9]+/$"))

    assert page.get_by_test_id("order-status").inner_text() == "Paid"
    assert page.get_by_test_id("order-package").count() == merchants
    assert cents_of(page, '[data-testid="order-total"]') == cart_total
    order = Order.objects.exclude(pk__in=known).get()
    assert (order.total, order.status) == (cart_total, "paid")
    page.screenshot(path=artifacts / "e2e-order-paid-1280.png", full_page=True)

    shipped_by = _merchant_ships(browser, live_server, order, artifacts)
    page.reload()
    package = page.locator(f'[data-testid="order-package"][data-merchant="{shipped_by}"]')
    assert package.get_by_test_id("package-status").inner_text() == "Shipped"
    assert "DHL-E2E-1" in package.get_by_test_id("package-tracking").inner_text()
    page.screenshot(path=artifacts / "e2e-order-shipped-1280.png", full_page=True)
    page.set_viewport_size(PHONE)
    page.screenshot(path=artifacts / "e2e-order-shipped-390.png", full_page=True)
    page.goto(reverse("checkout"))  # the cart is empty now: back to it
    assert page.url.endswith(reverse("cart"))
    call_command("reconcile_payments")  # the ledger's invariant holds for every order


def test_switch_on_the_checkout_page_then_a_failed_payment_puts_the_cart_back(
    page, demo_catalog, artifacts
):
    for offer in pick_improvable_offers():
        add_offer_through_search(page, offer)
    page.goto(reverse("cart"))
    page.get_by_label("Postal code").fill(POSTAL_CODE)
    page.get_by_role("button", name="Save").click()
    page.get_by_text(f"Shipping now calculated for {POSTAL_CODE}").wait_for()
    before = _checkout(page)
    switch = page.get_by_role("button", name=re.compile(r"^Switch and save"))
    page.screenshot(path=artifacts / "e2e-review-switch-offer.png", full_page=True)
    switch.click()
    page.wait_for_url("**/checkout/")  # back on the checkout page, not the cart
    page.get_by_text("Suggestion applied").wait_for()
    switched = cents_of(page, '[data-testid="summary-total"]')
    assert switched < before
    assert page.get_by_test_id("checkout-cheaper").count() == 0
    page.screenshot(path=artifacts / "e2e-review-switched-1280.png", full_page=True)
    page.set_viewport_size(PHONE)
    page.screenshot(path=artifacts / "e2e-review-switched-390.png", full_page=True)
    page.set_viewport_size(DESKTOP)

    # The switch kept the address typed before it (the buttons belong to the page's form).
    assert page.get_by_label("Full name").input_value() == "Ada Buyer"
    assert page.get_by_label("E-mail").input_value() == "buyer@example.com"
    checkout_place(page)
    page.get_by_test_id("pay-declined").click()
    page.wait_for_url(re.compile(r"/orders/[A-Z0-9]+/$"))
    page.get_by_text("Its products are back in your cart").wait_for()
    page.screenshot(path=artifacts / "e2e-payment-failed-1280.png", full_page=True)
    page.get_by_test_id("retry-checkout").click()
    page.wait_for_url("**/cart/")
    assert cents_of(page, '[data-testid="cart-total"]') == switched
