"""Price watch in a real browser: a shopper's cart is open, an admin lowers another
merchant's price in the Django admin, and the shopper sees the marker on the cart badge and
the notice on the cart page, opens the suggestion and applies it."""

import re

import pytest
from django.urls import reverse

from smartcart.models import OptimizationRun, PriceWatchRun
from storefront.models import Product
from storefront.money import format_money
from tests.e2e.helpers import add_offer_through_search, buyable_offers, cents_of

pytestmark = pytest.mark.e2e


def _dear_and_other():
    """A product's dearest offer (the shopper's) and another merchant's offer of it."""
    for product in Product.objects.order_by("id"):
        offers = sorted(buyable_offers(product), key=lambda offer: -offer.unit_price)
        if len(offers) >= 2 and offers[0].unit_price > 2000 + offers[1].merchant.base_fee:
            return offers[0], offers[1]
    raise AssertionError("The demo catalog has no product with two offers far enough apart")


def _admin_sets_price(browser, live_server, offer, cents: int) -> None:
    context = browser.new_context(base_url=live_server.url)
    admin = context.new_page()
    admin.goto(reverse("admin:login"))
    admin.fill("#id_username", "admin")
    admin.fill("#id_password", "demo-admin-pass")
    admin.get_by_role("button", name="Log in").click()
    admin.wait_for_url(re.compile(r"/admin/$"))
    admin.goto(reverse("admin:storefront_offer_change", args=[offer.pk]))
    admin.fill("#id_unit_price", str(cents))
    admin.get_by_role("button", name="Save", exact=True).click()
    admin.get_by_text("was changed successfully").wait_for()
    context.close()


def test_an_admin_price_drop_reaches_the_open_cart(
    browser, live_server, page, demo_catalog, artifacts
):
    mine, other = _dear_and_other()
    add_offer_through_search(page, mine)
    page.goto(reverse("cart"))
    before = cents_of(page, '[data-testid="cart-total"]')
    assert page.locator('[data-testid="price-watch-notice"]').count() == 0

    _admin_sets_price(browser, live_server, other, 100)
    assert PriceWatchRun.objects.filter(status="done", carts_notified=1).exists()

    page.goto(reverse("catalog"))
    marker = page.locator('[data-testid="price-watch-marker"]')
    marker.wait_for()
    notice_run = OptimizationRun.objects.get(source="price_watch")
    savings = notice_run.savings
    assert savings > 0
    words = f"Prices changed: your cart can now cost {format_money(savings)} less"
    assert marker.get_attribute("title") == words
    page.locator(".site-header").screenshot(path=artifacts / "e2e-price-watch-badge.png")

    page.locator("a.cart-link").click()
    page.wait_for_url(re.compile(r"/cart/#improve$"))
    notice = page.locator('[data-testid="price-watch-notice"]')
    assert words in notice.inner_text()
    panel = page.locator('#improve[data-state="saving"]')
    assert f"You can save {format_money(savings)}" in panel.inner_text()
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=artifacts / "e2e-price-watch-notice.png", full_page=True)

    page.get_by_role("button", name=re.compile(r"^Apply and save")).click()
    page.get_by_text("Suggestion applied").wait_for()
    after = cents_of(page, '[data-testid="cart-total"]')
    assert before - after == savings
    assert page.locator('[data-testid="price-watch-notice"]').count() == 0
    assert page.locator('[data-testid="price-watch-marker"]').count() == 0
    page.screenshot(path=artifacts / "e2e-price-watch-applied.png", full_page=True)
