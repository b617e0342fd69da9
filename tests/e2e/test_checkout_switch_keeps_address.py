"""Switch and save on the checkout page keeps the address typed before it, with and without
JavaScript, in a real browser (Chromium follows the 307 with the form's body)."""

import re

import pytest
from django.urls import reverse

from tests.e2e.conftest import DESKTOP
from tests.e2e.helpers import add_offer_through_search, cents_of, pick_improvable_offers

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("scripts", [True, False], ids=["js", "nojs"])
def test_switch_keeps_the_typed_address(browser, live_server, demo_catalog, artifacts, scripts):
    context = browser.new_context(
        base_url=live_server.url, viewport=DESKTOP, java_script_enabled=scripts
    )
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        for offer in pick_improvable_offers():
            if scripts:
                add_offer_through_search(page, offer)
            else:
                page.goto(reverse("product", args=[offer.product.slug]))
                page.get_by_role(
                    "button", name=f"Add from {offer.merchant.name}", exact=True
                ).click()
        page.goto(reverse("cart"))
        page.get_by_label("Postal code").fill("10115")
        page.get_by_role("button", name="Save").click()
        page.goto(reverse("checkout"))
        page.get_by_label("Full name").fill("Ada Typed")
        page.get_by_label("Street address").fill("Typedstr. 9")
        page.get_by_label("City").fill("Berlin")
        before = cents_of(page, '[data-testid="summary-total"]')
        page.get_by_role("button", name=re.compile(r"^Switch and save")).click()
        page.wait_for_url("**/checkout/")
        page.get_by_text("Suggestion applied").wait_for()
        assert cents_of(page, '[data-testid="summary-total"]') < before
        assert page.get_by_label("Full name").input_value() == "Ada Typed"
        assert page.get_by_label("Street address").input_value() == "Typedstr. 9"
        assert page.get_by_label("City").input_value() == "Berlin"
        assert page.get_by_test_id("error-summary").count() == 0
        name = f"switch-kept-{'js' if scripts else 'nojs'}.png"
        page.screenshot(path=artifacts / name, full_page=True)
    finally:
        context.close()
