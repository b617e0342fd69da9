"""Shared steps of the browser tests: choosing offers with a guaranteed improvement, adding
an offer the way a shopper does (search, open the product, press Add), filling the one-page
checkout, and a merchant's staff member signed in to the admin."""

import re
from itertools import combinations

from django.urls import reverse

from storefront.carts.pricing import PricedLine, Shipment, shipments_price
from storefront.catalog.shipping_selectors import merchant_terms_for_destination
from storefront.models import Merchant, MerchantStaff, Offer, Product
from storefront.money import format_money
from tests.factories import TEST_PASSWORD, UserFactory

ADMIN_VIEWPORT = {"width": 1280, "height": 900}
PAY_URL = re.compile(r"/orders/[A-Z0-9]+/pay/$")


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


def checkout_fill(page, *, email: str, full_name: str, postal_code: str, country: str = "DE"):
    """Fills the checkout page's address by its labels (a street in Berlin)."""
    page.get_by_label("E-mail").fill(email)
    page.get_by_label("Full name").fill(full_name)
    page.get_by_label("Street address").fill("Invalidenstr. 1")
    page.get_by_label("City").fill("Berlin")
    page.get_by_label("Postal code").fill(postal_code)
    page.get_by_label("Country").select_option(country)


def checkout_place(page) -> None:
    """Presses Place order on the checkout page and lands on the pay page. A cart priced
    for another postal code first comes back with the new total and a notice (nothing is
    ordered then): that page is placed as the shopper would, by pressing again."""
    with page.expect_navigation():
        page.get_by_test_id("place-order").click()
    if not PAY_URL.search(page.url):
        page.get_by_test_id("checkout-notice").wait_for()
        page.get_by_test_id("place-order").click()
    page.wait_for_url(PAY_URL)


def admin_as_merchant_staff(browser, live_server, merchant: Merchant, *, username: str):
    """A new staff member of ``merchant`` signed in to the admin in a browser context of its
    own, on the packages list; returns the context (close it) and the page."""
    staff = UserFactory(username=username, is_staff=True)
    MerchantStaff.objects.create(user=staff, merchant=merchant)
    context = browser.new_context(base_url=live_server.url, viewport=ADMIN_VIEWPORT)
    admin = context.new_page()
    admin.goto(reverse("admin:login"))
    admin.get_by_label("Username").fill(staff.username)
    admin.get_by_label("Password").fill(TEST_PASSWORD)
    admin.get_by_role("button", name="Log in").click()
    admin.goto(reverse("admin:storefront_merchantorder_changelist"))
    return context, admin


# One parcel row as _parcels.html writes it: "Ships from Hamburg · 2 items · 6.2 kg · €7.99"
# (or "free shipping").
PARCEL_ROW = re.compile(r"^Ships from (.+) · (\d+) items? · (\d+\.\d) kg · (.+)$")


def parcel_rows_read(page, scope: str) -> list[tuple[str, str, int, str, int]]:
    """The parcels shown inside every element matching ``scope`` (a merchant's section, a
    package or a row of the Improve-cart merchants table), each as (merchant, warehouse,
    units, kilograms as shown, fee in cents). The merchant is the scope's ``data-merchant``,
    else its heading cell's own text (the suggestion's table rows carry no attribute)."""
    found = []
    for element in page.locator(scope).all():
        rows = element.locator('[data-testid="parcel"]')
        if not rows.count():
            continue
        merchant = element.get_attribute("data-merchant") or element.locator("th").first.evaluate(
            "th => th.firstChild.textContent.trim()"
        )
        for row in rows.all():
            text = " ".join(row.inner_text().split())
            match = PARCEL_ROW.match(text)
            assert match, f"a parcel row reads {text!r}"
            warehouse, units, kg, fee = match.groups()
            assert warehouse == row.get_attribute("data-warehouse")
            cents = 0 if fee == "free shipping" else int(re.sub(r"\D", "", fee))
            assert cents == 0 or format_money(cents) == fee, f"fee {fee!r}"
            found.append((merchant, warehouse, int(units), kg, cents))
    return found


def small_tap_targets_in(page, scope: str, *, minimum: int = 44) -> str:
    """The controls inside ``scope`` smaller than ``minimum`` CSS px either way (the audit's
    rule: links inside running text aside), as a report; empty when none."""
    from tests.e2e.audit import small_tap_targets, tap_report

    inside = page.evaluate(
        """(scope) => Array.from(document.querySelectorAll(scope)).flatMap(
             (s) => Array.from(s.querySelectorAll('a[href], button, input, select, summary, '
               + '[role="button"], [tabindex]:not([tabindex="-1"])')))
             .map((el) => (el.innerText || el.value || el.getAttribute('aria-label') || '')
               .trim().replace(/\\s+/g, ' ').slice(0, 40))""",
        scope,
    )
    small = [t for t in small_tap_targets(page, minimum=minimum) if t["text"] in inside]
    return tap_report(small)
