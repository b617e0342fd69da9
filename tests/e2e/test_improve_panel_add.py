"""Add to cart where scripts run: the page stays where it was (no reload, no jump to the top),
the header's badge and the "Added" note change in place, the note is in an aria-live region
so screen readers hear it, and focus stays on the button pressed. Without scripts the same
form posts and the shopper comes back to the page with the note."""

import pytest
from django.urls import reverse

from storefront.models import CartLine, Product
from tests.e2e.conftest import PHONE
from tests.e2e.helpers import buyable_offers

pytestmark = pytest.mark.e2e


def _product_with_offers(count: int) -> tuple[Product, list]:
    for product in Product.objects.order_by("name", "id"):
        offers = buyable_offers(product)
        if len(offers) >= count:
            return product, offers
    raise AssertionError(f"no product of the demo has {count} buyable offers")


def _add_button(page, offer):
    return page.get_by_role("button", name=f"Add from {offer.merchant.name}", exact=True)


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_add_to_cart_stays_on_the_page_and_is_announced(
    browser, live_server, demo_catalog, artifacts, viewport
):
    size = PHONE if viewport == "phone" else {"width": 1280, "height": 900}
    context = browser.new_context(base_url=live_server.url, viewport=size)
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        product, offers = _product_with_offers(3)
        offer = offers[-1]  # down the list: adding must not scroll back to the top
        page.goto(reverse("product", args=[product.slug]))
        page.evaluate("() => { window.__samePage = true; }")
        button = _add_button(page, offer)
        button.scroll_into_view_if_needed()
        scrolled = page.evaluate("() => window.scrollY")
        button.focus()
        page.keyboard.press("Enter")

        note = page.locator(".messages[aria-live] .toast")
        note.get_by_text(f"Added {product.name} from {offer.merchant.name}").wait_for()
        assert page.locator(".messages").get_attribute("role") == "status"
        beside = page.locator("[data-added-note]")  # the same words where the shopper looks
        assert beside.count() == 1 and beside.inner_text() == "In your cart: 1 now. View cart"
        assert beside.get_attribute("aria-live") is None  # the status region speaks, once
        page.screenshot(path=artifacts / f"e2e-add-in-place-{viewport}.png")
        box = beside.bounding_box()
        assert box["y"] >= 0 and box["y"] + box["height"] <= size["height"] + 1
        assert page.evaluate("() => window.__samePage === true")  # no reload
        badge = page.locator('[data-testid="cart-units"]')
        assert " ".join(badge.inner_text().split()) == ", 1 item"
        focused = page.evaluate(
            "() => document.activeElement && document.activeElement.textContent.trim()"
        )
        assert focused == f"Add from {offer.merchant.name}"
        assert abs(page.evaluate("() => window.scrollY") - scrolled) < size["height"] / 2
        assert CartLine.objects.filter(offer=offer, quantity=1).count() == 1
        page.screenshot(path=artifacts / f"e2e-add-in-place-{viewport}.png")

        # Pressed again: the same line, two now, still on the page.
        page.keyboard.press("Enter")
        note.get_by_text("(2 in your cart now)").wait_for()
        assert page.evaluate("() => window.__samePage === true")
        assert CartLine.objects.get(offer=offer).quantity == 2
    finally:
        context.close()


def test_add_to_cart_without_scripts_still_works(browser, live_server, demo_catalog):
    context = browser.new_context(
        base_url=live_server.url, viewport=PHONE, java_script_enabled=False
    )
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        product, offers = _product_with_offers(2)
        page.goto(reverse("product", args=[product.slug]))
        _add_button(page, offers[0]).click()
        page.get_by_text(f"Added {product.name} from {offers[0].merchant.name}").wait_for()
        assert CartLine.objects.filter(offer=offers[0]).count() == 1
    finally:
        context.close()


def test_a_refused_add_shows_the_reason_as_without_scripts(page, demo_catalog):
    product, offers = _product_with_offers(2)
    offer = offers[0]
    page.goto(reverse("product", args=[product.slug]))
    offer.stock = 0
    offer.save(update_fields=["stock"])
    _add_button(page, offer).click()
    page.locator(".field-error, [role=alert]").first.wait_for()
    assert CartLine.objects.count() == 0
