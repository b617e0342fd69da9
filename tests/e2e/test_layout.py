"""Every shopper page at desktop and phone width: nothing overflows sideways, and the
screenshots are kept in tests/artifacts/ for people to look at. Plus the keyboard path."""

import re

import pytest
from django.urls import reverse

from storefront.models import Product
from tests.e2e.conftest import DESKTOP, PHONE
from tests.e2e.helpers import add_offer_through_search, pick_improvable_offers

pytestmark = pytest.mark.e2e


def assert_fits(page, name: str) -> None:
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0, f"{name} is {overflow}px wider than the viewport"


def shoot(page, artifacts, name: str, width: int) -> None:
    page.evaluate("() => window.scrollTo(0, 0)")
    assert_fits(page, name)
    page.screenshot(path=artifacts / f"layout-{name}-{width}.png", full_page=True)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_pages_fit_the_screen(browser, live_server, demo_catalog, artifacts, viewport):
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    page = context.new_page()
    width = viewport["width"]
    try:
        page.goto(reverse("cart"))
        shoot(page, artifacts, "cart-empty", width)
        page.goto(reverse("catalog"))
        shoot(page, artifacts, "catalog", width)
        page.goto(reverse("catalog") + "?q=zzzz-nothing")
        shoot(page, artifacts, "catalog-no-match", width)
        chosen = pick_improvable_offers()
        for offer in chosen:
            add_offer_through_search(page, offer)
        shoot(page, artifacts, "product", width)
        page.goto(reverse("cart"))
        shoot(page, artifacts, "cart", width)
        page.get_by_role("button", name="Improve cart").click()
        page.locator("#improve[data-state]").wait_for()
        shoot(page, artifacts, "cart-suggestion", width)
        page.goto(reverse("login"))
        shoot(page, artifacts, "login", width)
        page.goto(reverse("signup"))
        shoot(page, artifacts, "signup", width)
        page.goto("/products/no-such-product/")
        shoot(page, artifacts, "not-found", width)
    finally:
        context.close()


def test_keyboard_only_shopper_can_add_to_cart(page, demo_catalog):
    product = Product.objects.filter(offers__active=True).order_by("name").first()
    page.goto(reverse("product", args=[product.slug]))
    page.keyboard.press("Tab")
    skip = page.locator(":focus")
    assert skip.inner_text() == "Skip to content"
    # The focus ring is visible on the focused control.
    page.keyboard.press("Enter")
    page.locator("#qty-cheapest").focus()
    outline = page.evaluate("() => getComputedStyle(document.activeElement).boxShadow")
    assert outline != "none"
    page.keyboard.press("Tab")
    assert page.locator(":focus").inner_text() == "Add cheapest to cart"
    page.keyboard.press("Enter")
    page.get_by_text(f"Added {product.name}").wait_for()
    assert page.get_by_role("link", name=re.compile(r"^Cart\W+1 item$")).is_visible()
