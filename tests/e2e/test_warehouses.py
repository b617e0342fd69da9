"""The shopper's journey through warehouses (issue 29) in a real browser, on the demo's split
cart: both products from the merchant that keeps them in two warehouses (two parcels), the
cart's parcels and totals checked to the cent against the engine's pricing, Improve cart
moves both to the merchant that ships them in one parcel, apply, the one-page checkout shows
the parcels, pay, the order shows them, and the stock falls at the chosen warehouse.

Every step is audited (axe: no serious or critical finding) and photographed at 1280 and
390 px; at 390 px the parcel rows' controls are at least 44x44 px."""

import re

import pytest
from django.urls import reverse

from smartcart.selectors.problems import cart_current_breakdown, cart_problem_build
from storefront.carts.pricing_summary import cart_pricing_summary
from storefront.demo.catalog import DEMO_DESTINATION
from storefront.demo.fulfillment import demo_split_cart
from storefront.models import Cart, Offer, Order, WarehouseStock
from tests.e2e.audit import axe_report, axe_violations, horizontal_overflow
from tests.e2e.conftest import DESKTOP, PHONE
from tests.e2e.helpers import (
    add_offer_through_search,
    cents_of,
    checkout_fill,
    checkout_place,
    parcel_rows_read,
    small_tap_targets_in,
)

pytestmark = pytest.mark.e2e


def _stock_rows(offers: list[Offer]) -> dict[tuple[int, str], int | None]:
    rows = WarehouseStock.objects.filter(offer__in=offers).select_related("warehouse")
    return {(row.offer_id, row.warehouse.name): row.stock for row in rows}


def _expected_parcels(cart: Cart) -> tuple[int, list[tuple[str, str, int, int, int]]]:
    """The cart as the engine prices it (``gpu_engine.price_assignment`` through the
    smart-cart problem), and as the cart pricing service does; the two must agree to the
    cent. Returns the total and each parcel as (merchant, warehouse, units, grams, fee)."""
    build = cart_problem_build(cart=cart)
    engine = cart_current_breakdown(build=build)
    summary = cart_pricing_summary(cart=cart)
    assert summary.total == sum(cost.cost for cost in engine)
    names = {w.warehouse_id: w.name for nodes in build.nodes.nodes.values() for w in nodes}
    engine_parcels = sorted(
        (int(cost.merchant), names[int(p.node)], p.units, p.weight_g, p.fee)
        for cost in engine
        for p in cost.parcels
    )
    service_parcels = sorted(
        (group.merchant_id, p.warehouse_name, p.units, p.weight_g, p.fee)
        for group in summary.groups
        for p in group.parcels
    )
    assert engine_parcels == service_parcels
    by_id = {group.merchant_id: group.merchant_name for group in summary.groups}
    parcels = [(by_id[m], w, u, g, f) for m, w, u, g, f in service_parcels]
    return summary.total, parcels


def _shown(page, scope: str) -> list[tuple[str, str, int, str, int]]:
    """The parcels a page shows under ``scope``, sorted (weights as the page's 0.1 kg)."""
    return sorted(parcel_rows_read(page, scope))


def _rounded(parcels):
    from storefront.carts.pricing import weight_kg

    return sorted((m, w, u, weight_kg(g), f) for m, w, u, g, f in parcels)


class Steps:
    """Audits and photographs each step at both widths, collecting what fails, so one run
    reports every page's findings at once."""

    def __init__(self, page, artifacts):
        self.page, self.artifacts = page, artifacts
        self.axe: dict[str, str] = {}
        self.taps: dict[str, str] = {}
        self.wide: dict[str, int] = {}

    def check(self, name: str, *, audit: bool = True) -> None:
        for viewport in (DESKTOP, PHONE):
            self.page.set_viewport_size(viewport)
            width = viewport["width"]
            self.page.screenshot(
                path=self.artifacts / f"warehouses-{name}-{width}.png", full_page=True
            )
            if audit and (found := axe_violations(self.page)):
                self.axe[f"{name}-{width}"] = axe_report(found)
            if viewport is PHONE:
                # The parcel rows close up, where wrapping and alignment show.
                for i, parcels in enumerate(self.page.locator('[data-testid="parcels"]').all()):
                    parcels.screenshot(
                        path=self.artifacts / f"warehouses-{name}-parcels-{i}-{width}.png"
                    )
                if overflow := horizontal_overflow(self.page):
                    self.wide[name] = overflow
                # The parcel rows hold no control of their own: the merchant sections and
                # packages around them (Update, Remove, Cancel this package) are checked.
                scope = '.merchant-group, [data-testid="summary-package"], #improve'
                if audit and (small := small_tap_targets_in(self.page, scope)):
                    self.taps[name] = small
        self.page.set_viewport_size(DESKTOP)

    def problems(self) -> list[str]:
        problems = [f"axe {name}:\n{report}" for name, report in self.axe.items()]
        problems += [f"tap targets around the parcel rows, {n}:\n{r}" for n, r in self.taps.items()]
        if self.wide:
            problems.append(f"Pages wider than the phone (px): {self.wide}")
        return problems


def test_the_split_cart_through_warehouses_to_the_order(page, demo_catalog, artifacts):
    split = demo_split_cart()
    assert split is not None, "the demo catalog has no split cart"
    offers = [
        Offer.objects.select_related("product", "merchant").get(product=product, merchant=merchant)
        for merchant in (split.split, split.joined)
        for product in (split.heavy, split.light)
    ]
    split_offers, joined_offers = offers[:2], offers[2:]
    known_carts = set(Cart.objects.values_list("pk", flat=True))
    known_orders = set(Order.objects.values_list("pk", flat=True))
    steps = Steps(page, artifacts)

    # 1. Both products from the merchant that has them in two warehouses.
    for offer in split_offers:
        add_offer_through_search(page, offer)
    page.goto(reverse("cart"))
    page.get_by_label("Postal code").fill(DEMO_DESTINATION)
    page.get_by_role("button", name="Save").click()
    page.get_by_text(f"Shipping now calculated for {DEMO_DESTINATION}").wait_for()
    cart = Cart.objects.exclude(pk__in=known_carts).get()
    total, parcels = _expected_parcels(cart)
    assert {w for _, w, *_ in parcels} == {"Munich", "Hamburg"}  # two parcels, one merchant
    assert _shown(page, "section.merchant-group") == _rounded(parcels)
    assert cents_of(page, '[data-testid="cart-total"]') == total
    steps.check("cart-split")

    # 2. Improve cart: both move to the other merchant's one warehouse.
    page.get_by_role("button", name="Improve cart").click()
    page.locator('#improve[data-state="saving"]').wait_for()
    panel = page.locator("#improve")
    for offer in split_offers:
        row = panel.locator("tr.changed-row", has_text=offer.product.name)
        assert f"{split.split.name} · " in row.locator('td[data-label="Now"]').inner_text()
        assert (
            f"{split.joined.name} · Berlin"
            in row.locator('td[data-label="Suggested"]').inner_text()
        )
    suggested = _shown(page, "#improve .compare--merchants tbody tr")
    steps.check("improve-suggestion")
    page.get_by_role("button", name=re.compile(r"^Apply and save")).click()
    page.get_by_text("Suggestion applied").wait_for()

    # 3. The cart now ships one parcel from Berlin, priced as the engine prices it.
    new_total, new_parcels = _expected_parcels(cart)
    assert [(m, w, u) for m, w, u, _, _ in new_parcels] == [(split.joined.name, "Berlin", 2)]
    assert suggested == _rounded(new_parcels)
    assert new_total < total
    assert _shown(page, "section.merchant-group") == _rounded(new_parcels)
    assert cents_of(page, '[data-testid="cart-total"]') == new_total
    steps.check("cart-joined")

    # 4. The one-page checkout: the summary shows the parcel.
    page.get_by_role("link", name="Checkout").click()
    page.wait_for_url("**/checkout/")
    checkout_fill(
        page, email="buyer@example.com", full_name="Ada Buyer", postal_code=DEMO_DESTINATION
    )
    assert cents_of(page, '[data-testid="summary-total"]') == new_total
    assert _shown(page, '[data-testid="summary-package"]') == _rounded(new_parcels)
    steps.check("checkout")
    before = _stock_rows(offers)
    checkout_place(page)
    steps.check("pay", audit=False)
    page.get_by_test_id("pay").click()
    page.wait_for_url(re.compile(r"/orders/[A-Z0-9]+/$"))

    # 5. The order: paid, its package ships from Berlin, the stock fell there only.
    assert page.get_by_test_id("order-status").inner_text() == "Paid"
    assert cents_of(page, '[data-testid="order-total"]') == new_total
    assert _shown(page, '[data-testid="order-package"]') == _rounded(new_parcels)
    order = Order.objects.exclude(pk__in=known_orders).get()
    assert (order.total, order.status) == (new_total, "paid")
    after = _stock_rows(offers)
    expected = dict(before)
    for offer in joined_offers:
        key = (offer.pk, "Berlin")
        assert before[key] is not None  # the demo keeps a finite stock there: it must fall
        expected[key] = before[key] - 1
    assert after == expected
    for offer in joined_offers:
        offer.refresh_from_db()
        assert offer.stock == after[(offer.pk, "Berlin")]
    steps.check("order")

    problems = steps.problems()
    assert not problems, "\n".join(problems)
