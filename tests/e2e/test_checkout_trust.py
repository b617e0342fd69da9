"""A guest's checkout by keyboard alone, at 1280 and 390 px: the one checkout page with its
order summary and place button, a refused address whose error summary takes focus, the page
shown again with the total for the postal code typed (its notice takes focus), the demo
payment's two test buttons; on every step axe-core finds nothing serious or critical, and on
the phone every control is 44x44 px and nothing scrolls sideways. Screenshots of each step
are written for a person to look at."""

import re

import pytest
from django.urls import reverse

from storefront.models import Order
from storefront.money import format_money
from tests.e2e.audit import (
    axe_report,
    axe_violations,
    horizontal_overflow,
    shoot,
    small_tap_targets,
    tap_report,
)
from tests.e2e.conftest import DESKTOP, PHONE
from tests.e2e.helpers import add_offer_through_search, cents_of, pick_improvable_offers

pytestmark = pytest.mark.e2e

ADDRESS = [
    ("email", "buyer@example.com"),
    ("full_name", "Ada Buyer"),
    ("address_line", "Invalidenstr. 1"),
    ("postal_code", "10115"),
    ("city", "Berlin"),
]


def _active(page) -> dict:
    return page.evaluate(
        "() => ({id: document.activeElement.id, name: document.activeElement.name || '',"
        " text: (document.activeElement.innerText || '').trim()})"
    )


def _tab_to(page, test, limit: int = 60) -> dict:
    """Tab (forward) until ``test(active)`` holds; fails after ``limit`` presses."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        active = _active(page)
        if test(active):
            return active
    raise AssertionError("not reachable by Tab")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_guest_checks_out_by_keyboard(browser, live_server, demo_catalog, artifacts, viewport):
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    context.set_default_timeout(15_000)
    page = context.new_page()
    width = viewport["width"]
    problems: dict[str, str] = {}

    def audit(name: str) -> None:
        if violations := axe_violations(page):
            problems[f"axe {name}"] = axe_report(violations)
        if width == PHONE["width"]:
            if small := small_tap_targets(page):
                problems[f"tap {name}"] = tap_report(small)
            if overflow := horizontal_overflow(page):
                problems[f"overflow {name}"] = f"{overflow} px"
        shoot(page, artifacts, f"checkout-{name}", width)

    try:
        known = set(Order.objects.values_list("pk", flat=True))
        for offer in pick_improvable_offers()[:2]:
            add_offer_through_search(page, offer)
        page.goto(reverse("cart"))
        _tab_to(page, lambda a: a["text"] == "Checkout")
        page.keyboard.press("Enter")
        page.wait_for_url("**/checkout/")
        summary = page.get_by_test_id("checkout-summary")
        assert summary.get_by_test_id("summary-package").count() >= 1
        assert "When is my money taken?" in summary.inner_text()
        assert page.get_by_test_id("place-order").inner_text().startswith("Place order and pay")
        audit("page")

        # Sent without a name: the error summary is focused and links to the field.
        _tab_to(page, lambda a: a["name"] == "email")
        page.keyboard.press("Enter")
        page.get_by_test_id("error-summary").wait_for()
        assert _active(page)["id"] == "error-summary"
        assert page.locator('#error-summary a[href="#id_full_name"]').count() == 1
        assert page.locator("#id_full_name").get_attribute("aria-invalid") == "true"
        assert Order.objects.exclude(pk__in=known).count() == 0
        audit("page-errors")

        for name, value in ADDRESS:
            _tab_to(page, lambda a, name=name: a["name"] == name)
            page.keyboard.press("Control+A")
            page.keyboard.type(value)
        _tab_to(page, lambda a: a["name"] == "country")
        assert page.locator("#id_country").input_value() == "DE"
        shown = cents_of(page, '[data-testid="summary-total"]')
        _tab_to(page, lambda a: a["text"] == f"Place order and pay {format_money(shown)}")
        page.keyboard.press("Enter")
        # The cart had no postal code: the page comes back priced for 10115, nothing ordered,
        # its notice focused, the address as typed.
        page.get_by_test_id("checkout-notice").wait_for()
        assert _active(page)["id"] == "checkout-notice"
        assert "priced for 10115" in page.get_by_test_id("checkout-notice").inner_text()
        assert page.locator("#id_full_name").input_value() == "Ada Buyer"
        assert Order.objects.exclude(pk__in=known).count() == 0
        assert page.get_by_test_id("package-terms").count() >= 1
        total = cents_of(page, '[data-testid="summary-total"]')
        audit("page-repriced")

        _tab_to(page, lambda a: a["text"] == f"Place order and pay {format_money(total)}")
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"/orders/[A-Z0-9]+/pay/$"))
        assert cents_of(page, '[data-testid="pay-amount"]') == total
        text = page.locator("main").inner_text()
        assert "Pay (test: declined)" in text and "(test: succeeds)" in text
        assert not re.search(r"fraud|3DS|3-D Secure|gateway", text, re.I)
        audit("pay")

        _tab_to(page, lambda a: a["text"].endswith("(test: succeeds)"))
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"/orders/[A-Z0-9]+/$"))
        assert page.get_by_test_id("order-status").inner_text() == "Paid"
        audit("paid")
        order = Order.objects.exclude(pk__in=known).get()
        assert order.status == Order.Status.PAID and order.country == "DE"
    finally:
        context.close()
    assert not problems, "\n".join(f"{k}:\n{v}" for k, v in problems.items())


def test_checkout_works_without_javascript(browser, live_server, demo_catalog, artifacts):
    """With scripts off the error summary still has focus (``autofocus``) and the test
    payment's buttons still post through the provider."""
    context = browser.new_context(
        base_url=live_server.url, viewport=DESKTOP, java_script_enabled=False
    )
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        offer = pick_improvable_offers()[0]
        page.goto(reverse("product", args=[offer.product.slug]))
        page.get_by_role("button", name=f"Add from {offer.merchant.name}", exact=True).click()
        page.goto(reverse("checkout"))
        page.get_by_test_id("place-order").click()
        page.get_by_test_id("error-summary").wait_for()
        assert _active(page)["id"] == "error-summary"
        for name, value in ADDRESS:
            page.locator(f"#id_{name}").fill(value)
        page.locator("#id_country").select_option("AT")
        page.get_by_test_id("place-order").click()
        page.get_by_test_id("checkout-notice").wait_for()  # priced for 10115 now
        assert _active(page)["id"] == "checkout-notice"
        assert page.locator("#id_country").input_value() == "AT"
        shoot(page, artifacts, "checkout-repriced-nojs", DESKTOP["width"])
        page.get_by_test_id("place-order").click()
        page.wait_for_url(re.compile(r"/orders/[A-Z0-9]+/pay/$"))
        assert Order.objects.order_by("-pk").first().country == "AT"
        page.get_by_test_id("pay-declined").click()
        page.wait_for_url(re.compile(r"/orders/[A-Z0-9]+/$"))
        page.get_by_text("Its products are back in your cart").wait_for()
        shoot(page, artifacts, "checkout-declined-nojs", DESKTOP["width"])
    finally:
        context.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_signed_in_shopper_picks_a_saved_address(
    browser, live_server, demo_catalog, artifacts, viewport
):
    from django.contrib.auth import get_user_model

    from storefront.checkout.address import shipping_address_validate
    from storefront.checkout.addresses import address_remember

    user = get_user_model().objects.get(username="demo")
    for line in ("Old Street 9", "Invalidenstr. 1"):  # the second is the one used last
        fields = dict(ADDRESS, address_line=line, country="DE")
        address_remember(user=user, address=shipping_address_validate(**fields))
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    context.set_default_timeout(15_000)
    page = context.new_page()
    width = viewport["width"]
    try:
        page.goto(reverse("login"))
        page.get_by_label("Username").fill("demo")
        page.get_by_label("Password").fill("demo-shopper-pass")
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(lambda url: "/accounts/login" not in url)
        offer = pick_improvable_offers()[0]
        add_offer_through_search(page, offer)
        page.goto(reverse("checkout"))
        assert page.locator("#id_address_line").input_value() == "Invalidenstr. 1"
        assert page.get_by_test_id("saved-address").count() == 2
        violations = axe_violations(page)
        assert not violations, axe_report(violations)
        if width == PHONE["width"]:
            assert not small_tap_targets(page), tap_report(small_tap_targets(page))
            assert not horizontal_overflow(page)
        shoot(page, artifacts, "checkout-saved-addresses", width)
        _tab_to(page, lambda a: a["text"].startswith("Use this address"))
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"\?address=\d+$"))
        assert page.locator("#id_address_line").input_value() == "Old Street 9"
        page.get_by_test_id("new-address").click()
        assert page.locator("#id_address_line").input_value() == ""
    finally:
        context.close()


def test_the_merchant_reads_payment_and_the_whole_action_menu_on_a_phone(
    browser, live_server, demo_catalog, artifacts
):
    from storefront.models import MerchantOrder, MerchantStaff
    from tests.factories import TEST_PASSWORD, UserFactory

    package = MerchantOrder.objects.select_related("order").order_by("pk").first()
    assert package is not None
    staff = UserFactory(username="e2e-phone-merchant", is_staff=True)
    MerchantStaff.objects.create(user=staff, merchant=package.merchant)
    context = browser.new_context(base_url=live_server.url, viewport=PHONE)
    context.set_default_timeout(15_000)
    admin = context.new_page()
    try:
        admin.goto(reverse("admin:login"))
        admin.get_by_label("Username").fill(staff.username)
        admin.get_by_label("Password").fill(TEST_PASSWORD)
        admin.get_by_role("button", name="Log in").click()
        admin.goto(reverse("admin:storefront_merchantorder_changelist"))
        assert admin.locator("th.column-payment").count() == 1
        # Every action's words fit its menu (not cut to "Mark").
        cut = admin.evaluate(
            """() => {
              const select = document.querySelector('select[name=action]');
              const canvas = document.createElement('canvas').getContext('2d');
              canvas.font = getComputedStyle(select).font;
              const widths = [...select.options].map(o => canvas.measureText(o.text).width);
              const widest = Math.max(...widths);
              return {widest, width: select.clientWidth};
            }"""
        )
        admin.screenshot(path=artifacts / "e2e-merchant-list-390.png", full_page=True)
        assert cut["width"] >= cut["widest"], cut
    finally:
        context.close()
