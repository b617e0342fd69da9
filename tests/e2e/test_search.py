"""A shopper finds things: ordinary words and a misspelling, a facet to narrow, a result into
the cart. Screenshots at 1280 and 390 px go to tests/artifacts/search-*.png."""

import re
from itertools import pairwise

import pytest
from django.core.management import call_command
from django.urls import reverse

from tests.e2e.conftest import DESKTOP, PHONE

pytestmark = pytest.mark.e2e


@pytest.fixture
def search_catalog(transactional_db):
    """More of the demo than the shared fixture, so that every kind of product is there."""
    call_command("seed_demo", "--seed", "7", "--merchants", "8", "--products", "300", verbosity=0)


def search_for(page, words: str) -> None:
    search = page.get_by_role("searchbox", name="Search")
    search.fill(words)
    search.press("Enter")
    page.wait_for_url(re.compile(r"\?q="))


def result_names(page) -> list[str]:
    return page.locator(".product-card__name a").all_inner_texts()


def shown_count(page) -> int:
    return int(page.locator(".results-count strong").inner_text())


def fits(page) -> None:
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0, f"{overflow}px wider than the viewport"


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_search_narrow_and_add_to_cart(browser, live_server, search_catalog, artifacts, viewport):
    width = viewport["width"]
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    page = context.new_page()
    try:
        page.goto(reverse("catalog"))
        for words, expected in [("kettle", "kettle"), ("headphones", "headphones")]:
            search_for(page, words)
            names = result_names(page)
            assert names and expected in names[0].lower(), (words, names[:3])
            # Pictures come with the seed: every card shows one.
            assert page.locator(".product-card__tile img").count() == len(names)
        search_for(page, "coffee")
        assert shown_count(page) > 0
        fits(page)
        page.screenshot(path=artifacts / f"search-coffee-{width}.png", full_page=True)

        search_for(page, "ketle")  # misspelt: similar words still find kettles
        assert "kettle" in result_names(page)[0].lower()
        found = shown_count(page)
        page.screenshot(path=artifacts / f"search-typo-{width}.png", full_page=True)

        facets = page.locator("[data-facets]")
        if not facets.evaluate("element => element.open"):
            facets.locator("summary").click()  # folded on a phone
        in_stock = facets.get_by_role("link", name=re.compile(r"^In stock"))
        expected_count = int(in_stock.locator(".facet__count").inner_text())
        in_stock.click()
        page.wait_for_url(re.compile(r"in_stock=on"))
        assert shown_count(page) == expected_count <= found
        fits(page)
        page.screenshot(path=artifacts / f"search-facet-{width}.png", full_page=True)

        first = page.locator(".product-card").first
        name = first.locator(".product-card__name a").inner_text()
        first.get_by_role("button", name=re.compile(r"^Add cheapest")).click()
        page.get_by_text(f"Added {name}").wait_for()
        page.goto(reverse("cart"))
        assert page.get_by_role("link", name=name).is_visible()
        fits(page)
        page.screenshot(path=artifacts / f"search-cart-{width}.png", full_page=True)
    finally:
        context.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_long_merchant_names_wrap_clear_of_prices(
    browser, live_server, demo_catalog, artifacts, viewport
):
    from storefront.models import Merchant
    from tests.e2e.helpers import add_offer_through_search, pick_improvable_offers

    chosen = pick_improvable_offers()
    long_name = "Königlich Privilegierte Hanseatische Haushaltswaren Handelsgesellschaft"
    Merchant.objects.filter(pk=chosen[0].merchant_id).update(name=long_name)
    width = viewport["width"]
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    page = context.new_page()
    try:
        for offer in chosen:
            offer.refresh_from_db()
            add_offer_through_search(page, offer)
        page.goto(reverse("cart"))
        page.get_by_role("button", name="Improve cart").click()
        page.locator("#improve[data-state]").wait_for()
        fits(page)
        for row in page.locator("table.compare tbody tr").all():
            cells = [c.bounding_box() for c in row.locator("td .cell").all()]
            boxes = [b for b in cells if b]
            if width >= 1000:  # side by side: no cell may run into the next one
                for left, right in pairwise(boxes):
                    assert left["x"] + left["width"] <= right["x"] + 1, (left, right)
        total = page.locator(".totals__total").filter(has_text=long_name).first
        label, amount = total.locator("dt").bounding_box(), total.locator("dd").bounding_box()
        assert label["y"] + label["height"] <= amount["y"] + 1 or (
            label["x"] + label["width"] <= amount["x"] + 1
        )
        page.evaluate("() => window.scrollTo(0, 0)")
        page.screenshot(path=artifacts / f"search-long-merchant-{width}.png", full_page=True)
    finally:
        context.close()
