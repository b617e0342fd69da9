"""The run replayed: the same offer change checked twice, changes checked out of order, and
carts with warehouse merchants (pricing version 2) left out of the batch, counted."""

import pytest

from smartcart.models import OptimizationRun
from smartcart.pricewatch.services import price_watch_changes_record, price_watch_run
from storefront.models import Offer, ParcelRate, Warehouse, WarehouseStock
from tests.factories import (
    CartFactory,
    CartLineFactory,
    MerchantFactory,
    OfferFactory,
    ProductFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

Source = OptimizationRun.Source


def _market():
    """Two products at two merchants; six carts buying them at the dearer merchant."""
    here = MerchantFactory(name="Here", base_fee=300, per_extra_unit=0)
    there = MerchantFactory(name="There", base_fee=300, per_extra_unit=0)
    products = [ProductFactory(name=f"Item {i}") for i in range(2)]
    offers = {
        (p.pk, m.pk): OfferFactory(product=p, merchant=m, unit_price=1000)
        for p in products
        for m in (here, there)
    }
    carts = []
    for n in range(6):
        cart = CartFactory(owner=UserFactory())
        for p in products[: 1 + n % 2]:
            CartLineFactory(cart=cart, offer=offers[(p.pk, here.pk)], quantity=1 + n % 3)
        carts.append(cart)
    return here, there, products, offers, carts


def _notices() -> list[tuple]:
    """Every price-watch notice row: its cart, version, totals and suggested lines."""
    return sorted(
        (
            run.cart_id,
            run.cart_version,
            run.current_total,
            run.suggested_total,
            run.price_increase,
            run.superseded_at is None,
            tuple((row["line_id"], row["new_offer_id"]) for row in run.suggestion.get("lines", [])),
        )
        for run in OptimizationRun.objects.filter(source=Source.PRICE_WATCH)
    )


def _reprice(offer, price: int) -> int:
    Offer.objects.filter(pk=offer.pk).update(unit_price=price)
    return offer.product_id


def _check(product_ids: list[int]):
    price_watch_changes_record(product_ids=product_ids, merchant_ids=[])
    return price_watch_run()


def test_the_same_change_checked_twice_writes_no_second_notice():
    _, there, products, offers, carts = _market()
    changed = _reprice(offers[(products[0].pk, there.pk)], 700)
    first = _check([changed])
    assert first.carts_notified == len(carts)
    after_first = _notices()
    second = _check([changed])
    assert second.carts_checked == len(carts)
    assert second.carts_notified == 0
    assert _notices() == after_first
    live = [row for row in after_first if row[5]]
    assert len({row[0] for row in live}) == len(live) == len(carts)


def test_changes_replayed_out_of_order_leave_one_notice_per_cart_as_checked_in_order():
    _, there, products, offers, carts = _market()
    a = _reprice(offers[(products[0].pk, there.pk)], 600)
    b = _reprice(offers[(products[1].pk, there.pk)], 800)
    _check([a])
    _check([b])
    in_order = [row for row in _notices() if row[5]]
    rows = len(_notices())
    # Replayed: b again, then a again, then both: prices are read as they stand, so every
    # replay finds the notices already there.
    for changes in ([b], [a], [b, a], [a]):
        assert _check(changes).carts_notified == 0
    assert len(_notices()) == rows
    live = [row for row in _notices() if row[5]]
    assert live == in_order
    assert len({row[0] for row in live}) == len(live)
    # A third change is still checked: the notices move with it, one live per cart.
    c = _reprice(offers[(products[0].pk, there.pk)], 400)
    assert _check([c]).carts_notified > 0
    live = [row for row in _notices() if row[5]]
    assert len({row[0] for row in live}) == len(live) == len(carts)


def test_carts_a_warehouse_merchant_reaches_are_priced_at_its_warehouses_not_as_version_1():
    here, there, products, offers, carts = _market()
    far = MerchantFactory(name="Far", base_fee=0, per_extra_unit=0)
    leipzig = Warehouse.objects.create(merchant=far, name="Leipzig", postal_code="04109")
    lone = ProductFactory(name="Lone")
    cheap_far = OfferFactory(product=lone, merchant=far, unit_price=100)
    dear_here = OfferFactory(product=lone, merchant=here, unit_price=5000)
    v2_cart = CartFactory(owner=UserFactory())
    CartLineFactory(cart=v2_cart, offer=dear_here, quantity=1)
    WarehouseStock.objects.create(offer=cheap_far, warehouse=leipzig, stock=None)
    ParcelRate.objects.create(warehouse=leipzig, postal_prefix="", base_fee=199)
    changed = [_reprice(cheap_far, 90), _reprice(offers[(products[0].pk, there.pk)], 700)]
    run = _check(changed)
    # Built through the single-cart builder (a column per warehouse), never skipped nor priced
    # as version 1 (Far's own shipping rule is free: version 1 would say 90).
    assert (run.carts_checked, run.carts_skipped) == (len(carts) + 1, 0)
    assert run.carts_notified == len(carts) + 1
    notice = OptimizationRun.objects.get(cart=v2_cart, superseded_at__isnull=True)
    assert (notice.current_total, notice.suggested_total) == (5000 + 300, 90 + 199)
    # Replayed: the same change finds the notice already there.
    assert _check([cheap_far.product_id]).carts_notified == 0
    assert OptimizationRun.objects.filter(cart=v2_cart, superseded_at__isnull=True).count() == 1
