"""The shopper's main path in a real browser: search, add three items from different
merchants, Improve cart, Apply, and the total drops by exactly the promised savings."""

import re

import pytest
from django.urls import reverse

from smartcart.models import OptimizationRun
from smartcart.services import optimization_run_execute
from storefront.carts.pricing_summary import cart_pricing_summary
from storefront.models import Cart
from storefront.money import format_money
from tests.e2e.helpers import (
    add_offer_through_search,
    assignment_total,
    cents_of,
    pick_improvable_offers,
)

pytestmark = pytest.mark.e2e


def test_improve_cart_saves_exactly_what_it_promises(page, demo_catalog, artifacts):
    chosen = pick_improvable_offers()
    for offer in chosen:
        add_offer_through_search(page, offer)

    page.goto(reverse("cart"))
    groups = page.locator("section.merchant-group")
    assert groups.count() == 3
    assert sorted(groups.evaluate_all("els => els.map(e => e.dataset.merchant)")) == sorted(
        offer.merchant.name for offer in chosen
    )
    before = cents_of(page, '[data-testid="cart-total"]')
    assert before == assignment_total(chosen)
    page.screenshot(path=artifacts / "e2e-cart-before.png", full_page=True)

    page.get_by_role("button", name="Improve cart").click()
    panel = page.locator('#improve[data-state="saving"]')
    panel.wait_for()
    savings = cents_of(page, '[data-testid="savings"] .savings__amount')
    assert savings > 0
    assert f"You can save {format_money(savings)}" in panel.inner_text()
    run = OptimizationRun.objects.get()
    assert (run.current_total, run.savings) == (before, savings)
    panel.screenshot(path=artifacts / "e2e-suggestion-panel.png")
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=artifacts / "e2e-cart-suggestion.png", full_page=True)

    page.get_by_role("button", name=re.compile(r"^Apply and save")).click()
    page.get_by_text("Suggestion applied").wait_for()
    after = cents_of(page, '[data-testid="cart-total"]')
    assert before - after == savings
    assert page.locator("#improve").count() == 0
    cart = Cart.objects.get(owner__isnull=True)
    assert cart_pricing_summary(cart=cart).total == run.suggested_total == after
    page.screenshot(path=artifacts / "e2e-cart-after.png", full_page=True)


def test_progress_is_polled_until_the_suggestion_arrives(page, demo_catalog, artifacts):
    """A queued job (as with a real worker): the panel shows progress, and the page's
    script swaps in the suggestion once the job is done, without a reload."""
    chosen = pick_improvable_offers()
    for offer in chosen:
        add_offer_through_search(page, offer)
    cart = Cart.objects.get(owner__isnull=True)
    run = OptimizationRun.objects.create(
        cart=cart,
        cart_version=cart.version,
        status=OptimizationRun.Status.QUEUED,
        problem_size={"lines": 3, "merchants": 8, "offers": 20, "complexity": "100"},
    )
    page.goto(reverse("cart"))
    page.locator('#improve[data-state="pending"]').wait_for()
    assert page.get_by_role("button", name="Improving…").is_disabled()
    # The script swaps the panel on every poll; the region around it stays.
    page.locator("#improve-region").screenshot(path=artifacts / "e2e-progress-panel.png")
    marker = page.evaluate("() => (window.__noReload = true)")
    assert marker is True

    optimization_run_execute(run_id=run.pk)

    page.locator('#improve[data-state="saving"]').wait_for()
    assert page.evaluate("() => window.__noReload") is True  # the same page, not a reload
    assert page.get_by_role("button", name="Improve cart").is_enabled()


def test_anonymous_cart_survives_sign_in(page, demo_catalog):
    offer = pick_improvable_offers()[0]
    add_offer_through_search(page, offer)
    page.get_by_role("link", name="Sign in").click()
    page.get_by_text("The 1 item in your cart will be kept when you sign in.").wait_for()
    page.get_by_label("Username").fill("demo")
    page.get_by_label("Password").fill("demo-shopper-pass")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text("Welcome back, demo.").wait_for()
    page.goto(reverse("cart"))
    assert page.locator(".cart-line__name").all_inner_texts() == [offer.product.name]
    assert Cart.objects.get(owner__username="demo").lines.get().offer_id == offer.pk
