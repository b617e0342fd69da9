"""The shopper's main path in a real browser: search, add three items from different
merchants, Improve cart, Apply, and the total drops by exactly the promised savings."""

import re
from itertools import combinations

import pytest
from django.urls import reverse

from smartcart.models import OptimizationRun
from smartcart.services import optimization_run_execute
from storefront.models import Cart, Offer, Product
from storefront.money import format_money
from storefront.pricing import PricedLine, Shipment, shipments_price
from storefront.selectors import cart_pricing_summary, merchant_terms_for_destination

pytestmark = pytest.mark.e2e


def assignment_total(offers: list[Offer]) -> int:
    """The contract's total for one unit of each offer, shipping to no particular place."""
    terms = merchant_terms_for_destination(
        merchant_ids={offer.merchant_id for offer in offers}, postal_code=""
    )
    by_merchant: dict[int, list[PricedLine]] = {}
    for offer in offers:
        by_merchant.setdefault(offer.merchant_id, []).append(
            PricedLine(line_id=offer.product_id, quantity=1, unit_price=offer.unit_price)
        )
    shipments = [
        Shipment(
            merchant_id=merchant_id,
            shipping=terms[merchant_id].shipping,
            discount=terms[merchant_id].discount,
            lines=tuple(lines),
        )
        for merchant_id, lines in by_merchant.items()
    ]
    return sum(cost.cost for cost in shipments_price(shipments).values())


def buyable_offers(product: Product) -> list[Offer]:
    offers = Offer.objects.filter(product=product, active=True, merchant__active=True)
    offers = offers.select_related("merchant", "product").order_by("unit_price", "merchant_id")
    return [offer for offer in offers if offer.can_supply(1)]


def pick_improvable_offers() -> list[Offer]:
    """Three products, each taken from its dearest offer at a merchant that charges for
    shipping, all three merchants different, such that simply buying each product at its
    cheapest offer costs strictly less. Improve cart must then find savings: the optimum is
    at most that cheaper assignment."""
    candidates = []
    for product in Product.objects.order_by("name", "id"):
        offers = buyable_offers(product)
        dear = [offer for offer in offers[1:] if offer.merchant.base_fee > 0]
        if dear:
            candidates.append((dear[-1], offers[0]))
    for triple in combinations(candidates, 3):
        current = [dear for dear, _ in triple]
        if len({offer.merchant_id for offer in current}) < 3:
            continue
        if assignment_total([cheapest for _, cheapest in triple]) < assignment_total(current):
            return current
    raise AssertionError("The demo catalog has no three offers with a guaranteed improvement")


def cents_of(page, selector: str) -> int:
    """The amount an element shows, checked against its exact cents."""
    element = page.locator(selector).first
    cents = int(element.get_attribute("data-cents"))
    assert format_money(cents) in element.inner_text()
    return cents


def add_offer_through_search(page, offer: Offer) -> None:
    page.goto(reverse("catalog"))
    search = page.get_by_role("searchbox", name="Search")
    search.fill(offer.product.name)
    search.press("Enter")
    page.wait_for_url(re.compile(r"\?q="))
    product_url = reverse("product", args=[offer.product.slug])
    page.locator(f'.product-card__name a[href="{product_url}"]').click()
    page.wait_for_url(f"**{product_url}")
    page.get_by_role("button", name=f"Add from {offer.merchant.name}", exact=True).click()
    page.get_by_text(f"Added {offer.product.name} from {offer.merchant.name}").wait_for()


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
    page.locator("#improve").screenshot(path=artifacts / "e2e-progress-panel.png")
    marker = page.evaluate("() => (window.__noReload = true)")
    assert marker is True

    optimization_run_execute(run_id=run.pk)

    page.locator('#improve[data-state="saving"]').wait_for()
    assert page.evaluate("() => window.__noReload") is True  # the same page, not a reload


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
