"""The cart page with a price-watch notice and its suggestion, at 1280 and 390 px: the notice
sits above the summary and Checkout, Apply sits right under the headline saving (before the
line-by-line detail), the badge's marker says the saving in words, and a line sold out at its
merchant is found elsewhere by Improve cart."""

import re

import pytest
from django.urls import reverse

from storefront.catalog.services import offer_update
from storefront.models import Product
from tests.e2e.audit import axe_report, axe_violations, small_tap_targets, tap_report
from tests.e2e.conftest import DESKTOP, PHONE
from tests.e2e.helpers import add_offer_through_search, buyable_offers

pytestmark = pytest.mark.e2e


def _dear_and_other():
    """A product's dearest offer (the shopper's) and another merchant's offer of it."""
    for product in Product.objects.order_by("id"):
        offers = sorted(buyable_offers(product), key=lambda offer: -offer.unit_price)
        if len(offers) >= 2 and offers[0].unit_price > 2000 + offers[1].merchant.base_fee:
            return offers[0], offers[1]
    raise AssertionError("The demo catalog has no product with two offers far enough apart")


def _audit(page, viewport) -> None:
    """No serious or critical axe finding; on a phone no control of the panel under 44 px."""
    violations = axe_violations(page)
    assert not violations, axe_report(violations)
    if viewport is PHONE:
        small = [t for t in small_tap_targets(page) if t["what"].startswith(("button", "a"))]
        panel = page.locator("#improve").inner_text()
        small = [t for t in small if t["text"] and t["text"] in panel]
        assert not small, tap_report(small)


def _box(page, selector: str) -> dict:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, f"{selector} is not shown"
    return box


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_notice_then_suggestion_with_apply_by_the_saving(
    browser, live_server, demo_catalog, artifacts, viewport
):
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    context.set_default_timeout(15_000)
    page = context.new_page()
    width = viewport["width"]
    try:
        mine, other = _dear_and_other()
        add_offer_through_search(page, mine)
        offer_update(offer=other, unit_price=100)  # the price watch tells the open cart

        page.goto(reverse("catalog"))
        marker = page.locator('[data-testid="price-watch-marker"]')
        marker.wait_for()
        assert re.fullmatch(r"Save €\d+\.\d\d", marker.locator("[aria-hidden]").inner_text())

        page.goto(reverse("cart"))
        notice = _box(page, '[data-testid="price-watch-notice"]')
        summary = _box(page, "#summary-title")
        checkout = _box(page, '[data-testid="checkout"]')
        assert notice["y"] <= summary["y"] + 1 and notice["y"] < checkout["y"]
        if viewport is PHONE:  # one column: the whole notice comes before the summary
            assert notice["y"] + notice["height"] <= summary["y"]

        title = _box(page, '#improve[data-state="saving"] #improve-title')
        apply = page.get_by_role("button", name=re.compile(r"^Apply and save"))
        apply_box = apply.bounding_box()
        detail = _box(page, "#improve .compare--lines")
        assert apply_box["y"] < detail["y"], "Apply comes before the line-by-line detail"
        assert apply_box["y"] - title["y"] < 260, "Apply sits by the headline saving"
        _audit(page, viewport)
        page.evaluate("() => window.scrollTo(0, 0)")
        page.screenshot(path=artifacts / f"e2e-improve-panel-notice-{width}.png", full_page=True)
        page.locator("#improve").screenshot(path=artifacts / f"e2e-improve-panel-{width}.png")
    finally:
        context.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_sold_out_line_is_found_elsewhere(
    browser, live_server, demo_catalog, artifacts, viewport
):
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    context.set_default_timeout(15_000)
    page = context.new_page()
    width = viewport["width"]
    try:
        mine, _ = _dear_and_other()
        add_offer_through_search(page, mine)
        offer_update(offer=mine, stock=0)
        page.goto(reverse("cart"))
        page.get_by_role("button", name="Improve cart").click()
        panel = page.locator('#improve[data-state="replace"]')
        panel.wait_for()
        assert f"{mine.product.name}: sold out, found at another merchant" in panel.inner_text()
        _audit(page, viewport)
        page.evaluate("() => window.scrollTo(0, 0)")
        page.screenshot(path=artifacts / f"e2e-improve-sold-out-{width}.png", full_page=True)
        page.get_by_role("button", name=re.compile(r"^Apply: buy everything for")).click()
        page.get_by_text("Suggestion applied").wait_for()
        page.get_by_role("link", name="Checkout").wait_for()  # the cart can be bought again
    finally:
        context.close()
