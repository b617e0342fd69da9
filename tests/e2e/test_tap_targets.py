"""On a 390 px phone every control a finger can hit is at least 44x44 px (links inside
running text aside), nothing scrolls sideways, the header does not sit on the Improve-cart
suggestion, and only the first catalog page carries the marketing banner."""

import re

import pytest
from django.urls import reverse

from tests.e2e.audit import (
    horizontal_overflow,
    shoot,
    small_tap_targets,
    sticky_cover,
    tap_report,
    visit_shopper_pages,
)
from tests.e2e.conftest import DESKTOP, PHONE

pytestmark = pytest.mark.e2e


def test_phone_tap_targets_and_width(phone_page, demo_catalog, artifacts):
    page = phone_page
    small, wide, covered = {}, {}, {}

    def check(name: str) -> None:
        if name == "cart-suggestion":
            covered[name] = sticky_cover(page, "#improve")
        if overflow := horizontal_overflow(page):
            wide[name] = overflow
        facets = page.locator("[data-facets]")
        if facets.count() and not facets.evaluate("element => element.open"):
            facets.locator("summary").click()  # the folded filters are targets too
        if targets := small_tap_targets(page):
            small[name] = tap_report(targets)
        shoot(page, artifacts, f"tap-{name}", PHONE["width"])

    visit_shopper_pages(page, check)
    problems = []
    if any(covered.values()):
        problems.append(f"The sticky header covers the suggestion (px): {covered}")
    if wide:
        problems.append(f"Pages wider than the phone (px): {wide}")
    if small:
        problems.append(
            "Tap targets under 44x44 px:\n"
            + "\n".join(f"  {name}:\n{report}" for name, report in small.items())
        )
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_header_never_covers_the_suggestion(browser, live_server, demo_catalog, viewport):
    from tests.e2e.helpers import add_offer_through_search, pick_improvable_offers

    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        for offer in pick_improvable_offers():
            add_offer_through_search(page, offer)
        page.goto(reverse("cart"))
        page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
        page.get_by_role("button", name="Improve cart").click()
        page.locator("#improve[data-state]:not([aria-busy])").wait_for()
        assert sticky_cover(page, "#improve") == 0
        if viewport is PHONE:  # Apply sits with the headline saving, not a screen below it
            panel = page.locator("#improve").bounding_box()
            apply = page.get_by_role("button", name=re.compile(r"^Apply and save")).bounding_box()
            assert apply["y"] - panel["y"] < PHONE["height"] / 2
        # The page's own link to the panel (the price-watch badge uses it) lands clear too.
        page.goto(reverse("cart") + "#improve")
        page.locator("#improve").wait_for()
        assert sticky_cover(page, "#improve") == 0
    finally:
        context.close()


def test_the_banner_is_on_the_first_catalog_page_only(phone_page, demo_catalog):
    page = phone_page
    page.goto(reverse("catalog"))
    assert page.locator("[data-testid=catalog-banner]").is_visible()
    for query in ("?page=2", "?q=coffee", "?in_stock=on"):
        page.goto(reverse("catalog") + query)
        assert page.locator("[data-testid=catalog-banner]").count() == 0, query
        first = page.locator(".product-card").first
        # The first result shows on the first screen.
        assert first.bounding_box()["y"] < PHONE["height"] - 100, query
