"""axe-core on every shopper page at desktop and phone width: no serious or critical
violation. A keyboard user sees a solid 2 px focus ring on every control, and the filters
say what they are (links), not checkboxes that ignore Space."""

import pytest
from django.urls import reverse

from tests.e2e.audit import (
    axe_report,
    axe_violations,
    focus_ring_of_active,
    shoot,
    visit_shopper_pages,
    weak_focus_ring,
)
from tests.e2e.conftest import DESKTOP, PHONE

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_shopper_pages_have_no_serious_axe_violations(
    browser, live_server, demo_catalog, artifacts, viewport
):
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    context.set_default_timeout(15_000)
    page = context.new_page()
    found = {}

    def check(name: str) -> None:
        shoot(page, artifacts, name, viewport["width"])
        violations = axe_violations(page)
        if violations:
            found[name] = axe_report(violations)

    try:
        visit_shopper_pages(page, check)
    finally:
        context.close()
    assert not found, "\n".join(f"{name}:\n{report}" for name, report in found.items())


def _tab_through(page, limit: int) -> list[dict]:
    weak, seen = [], set()
    for _ in range(limit):
        page.keyboard.press("Tab")
        ring = focus_ring_of_active(page)
        if ring is None or not ring["visible"]:
            continue
        key = (ring["what"], ring["text"])
        if key in seen:
            break  # wrapped round
        seen.add(key)
        if weak_focus_ring(ring):
            weak.append(ring)
    return weak


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_every_control_shows_a_solid_focus_ring(browser, live_server, demo_catalog, viewport):
    from storefront.models import Product

    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    page = context.new_page()
    product = Product.objects.filter(offers__active=True).order_by("name")[0]
    weak = []
    try:
        for url in (reverse("catalog"), reverse("product", args=[product.slug])):
            page.goto(url)
            weak += _tab_through(page, limit=60)
        page.get_by_role("button", name="Add cheapest to cart").click()
        # With JavaScript the add is a fetch: leaving at once could cancel it.
        page.get_by_text("In your cart:").first.wait_for()
        page.goto(reverse("cart"))
        weak += _tab_through(page, limit=40)
    finally:
        context.close()
    assert not weak, "Weak focus rings (need solid, >= 2px, >= 3:1):\n" + "\n".join(
        f"    {r['what']} {r['text']!r}: {r['style']} {r['width']}px alpha {r['alpha']}"
        f" contrast {r['contrast']}"
        for r in weak
    )


def test_filters_are_links_that_say_when_they_are_chosen(page, demo_catalog):
    page.goto(reverse("catalog"))
    assert page.locator("[data-facets] [role=checkbox]").count() == 0
    in_stock = page.locator("[data-facets]").get_by_role("link", name="In stock")
    assert in_stock.get_attribute("aria-current") is None
    in_stock.click()
    page.wait_for_url("**in_stock=on**")
    chosen = page.locator("[data-facets]").get_by_role("link", name="In stock")
    assert chosen.get_attribute("aria-current") == "true"
    assert "selected; remove" in chosen.inner_text() or "remove" in (chosen.text_content() or "")
