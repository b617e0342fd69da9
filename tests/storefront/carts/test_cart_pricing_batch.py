"""Pricing many carts at once: the batch (one lines query, one zone-index match) gives every
cart the summary the per-cart SQL resolution gives, to the cent, in queries that do not grow
with the number of carts."""

import random

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storefront.carts.pricing_summary import (
    cart_pricing_summaries,
    cart_pricing_summary,
    cart_pricing_summary_via_sql,
)
from storefront.catalog.selectors import product_cheapest_offer
from storefront.catalog.shipping_selectors import (
    merchant_terms_for_destination,
    merchant_terms_for_merchants,
)
from storefront.catalog.zone_index import zone_index_current, zone_index_invalidate
from storefront.models import Merchant, ShippingZone
from tests.factories import (
    CartFactory,
    CartLineFactory,
    MerchantFactory,
    OfferFactory,
    ProductFactory,
    ShippingZoneFactory,
)

pytestmark = pytest.mark.django_db


class _Rollback(Exception):
    pass


_money = st.integers(0, 2000)
# Everywhere (""), short overlapping prefixes and full-length (10 character) ones.
_prefix = st.one_of(
    st.just(""),
    st.text(alphabet="12A", min_size=1, max_size=3),
    st.text(alphabet="12A", min_size=10, max_size=10),
)
_zone = st.tuples(_prefix, _money, _money, st.one_of(st.none(), st.integers(0, 6000)))
_merchant = st.fixed_dictionaries(
    {
        "active": st.booleans(),
        "base_fee": _money,
        "per_extra_unit": _money,
        "free_over": st.one_of(st.none(), st.integers(0, 6000)),
        "discount": st.one_of(st.none(), st.tuples(st.integers(1, 4), st.integers(0, 10_000))),
        "zones": st.lists(_zone, max_size=4, unique_by=lambda zone: zone[0]),
    }
)
# No destination, a random code (separators included), or one built on a zone's prefix so
# that deep and full-length zones are hit, not only the catch-all.
_destination = st.one_of(
    st.just(""),
    st.text(alphabet="12A -", min_size=3, max_size=10).map(str.strip),
    st.integers(0, 40),
)
_line = st.fixed_dictionaries(
    {
        "merchant": st.integers(0, 10),
        "unit_price": st.integers(0, 5000),
        "quantity": st.integers(1, 4),
        "offer_active": st.booleans() | st.just(True),
        "stock": st.one_of(st.none(), st.integers(0, 5)),
    }
)
_cart = st.tuples(_destination, st.lists(_line, max_size=5))


def _merchants_create(specs) -> list[Merchant]:
    merchants = []
    for spec in specs:
        min_units, basis_points = spec["discount"] or (None, None)
        merchant = MerchantFactory(
            active=spec["active"],
            base_fee=spec["base_fee"],
            per_extra_unit=spec["per_extra_unit"],
            free_over=spec["free_over"],
            discount_min_units=min_units,
            discount_basis_points=basis_points,
        )
        for prefix, base_fee, per_extra_unit, free_over in spec["zones"]:
            ShippingZoneFactory(
                merchant=merchant,
                postal_prefix=prefix,
                base_fee=base_fee,
                per_extra_unit=per_extra_unit,
                free_over=free_over,
            )
        merchants.append(merchant)
    return merchants


def _postal_code(destination, prefixes: list[str]) -> str:
    if not isinstance(destination, int):
        return destination
    if not prefixes:
        return ""
    return (prefixes[destination % len(prefixes)] + "12A1")[:10]


def _carts_create(specs, merchants: list[Merchant]):
    prefixes = sorted(ShippingZone.objects.values_list("postal_prefix", flat=True))
    carts = []
    for destination, lines in specs:
        cart = CartFactory(postal_code=_postal_code(destination, prefixes))
        for line in lines:
            offer = OfferFactory(
                merchant=merchants[line["merchant"] % len(merchants)],
                unit_price=line["unit_price"],
                active=line["offer_active"],
                stock=line["stock"],
            )
            CartLineFactory(cart=cart, offer=offer, quantity=line["quantity"])
        carts.append(cart)
    return carts


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    merchant_specs=st.lists(_merchant, min_size=1, max_size=4),
    cart_specs=st.lists(_cart, min_size=1, max_size=5),
)
def test_batch_prices_every_cart_like_the_per_cart_sql_resolution(merchant_specs, cart_specs):
    try:
        with transaction.atomic():
            merchants = _merchants_create(merchant_specs)
            carts = _carts_create(cart_specs, merchants)
            # What the commit of these rows would do (the test transaction never commits).
            zone_index_invalidate()

            batch = cart_pricing_summaries(carts=carts)

            assert batch == [cart_pricing_summary_via_sql(cart=cart) for cart in carts]
            assert batch == [cart_pricing_summary(cart=cart) for cart in carts]
            for cart in carts:
                assert merchant_terms_for_merchants(
                    merchants=merchants, postal_code=cart.postal_code
                ) == merchant_terms_for_destination(
                    merchant_ids=[merchant.pk for merchant in merchants],
                    postal_code=cart.postal_code,
                )
            raise _Rollback
    except _Rollback:
        pass


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_batch_parity_on_a_seeded_random_market(seed):
    """Larger than the examples above: a dozen merchants (some inactive) with nested, catch-all
    and full-length zones, and 60 carts over their destinations, some with none."""
    rng = random.Random(seed)
    merchants = []
    for index in range(12):
        merchant = MerchantFactory(
            active=rng.random() > 0.2,
            base_fee=rng.randrange(0, 900),
            per_extra_unit=rng.randrange(0, 300),
            free_over=rng.choice([None, rng.randrange(0, 8000)]),
            with_discount=index % 3 == 0,
        )
        prefixes = {"", "1", "10", "101", "1011512345", "2", "20095", "8"}
        for prefix in rng.sample(sorted(prefixes), rng.randrange(0, len(prefixes))):
            ShippingZoneFactory(
                merchant=merchant,
                postal_prefix=prefix,
                base_fee=rng.randrange(0, 900),
                per_extra_unit=rng.randrange(0, 300),
                free_over=rng.choice([None, rng.randrange(0, 8000)]),
            )
        merchants.append(merchant)
    codes = ["", "10115", "1011512345", "10-117", "20095", "80331", "99999", "SW1A 1AA"]
    carts = []
    for _ in range(60):
        cart = CartFactory(postal_code=rng.choice(codes))
        for _ in range(rng.randrange(0, 6)):
            offer = OfferFactory(
                merchant=rng.choice(merchants),
                unit_price=rng.randrange(0, 6000),
                active=rng.random() > 0.1,
                stock=rng.choice([None, None, rng.randrange(0, 5)]),
            )
            CartLineFactory(cart=cart, offer=offer, quantity=rng.randrange(1, 4))
        carts.append(cart)
    zone_index_invalidate()

    batch = cart_pricing_summaries(carts=carts)

    assert batch == [cart_pricing_summary_via_sql(cart=cart) for cart in carts]
    zoned = {group.shipping_rule.zone_prefix for summary in batch for group in summary.groups}
    assert {None, "", "1011512345"} <= zoned


def test_deep_overlapping_and_full_length_zones_and_no_destination():
    merchant = MerchantFactory(base_fee=900, per_extra_unit=100, free_over=None)
    for prefix, fee in [("", 1), ("1", 2), ("12", 3), ("1234567890", 4)]:
        ShippingZoneFactory(merchant=merchant, postal_prefix=prefix, base_fee=fee, per_extra_unit=0)
    other = MerchantFactory(base_fee=700, per_extra_unit=0, free_over=None)
    ShippingZoneFactory(merchant=other, postal_prefix="99", base_fee=5, per_extra_unit=0)
    codes = ["1234567890", "1234567891", "12 345", "1-9", "88888", ""]
    carts = []
    for code in codes:
        cart = CartFactory(postal_code=code)
        CartLineFactory(cart=cart, offer=OfferFactory(merchant=merchant, unit_price=1000))
        CartLineFactory(cart=cart, offer=OfferFactory(merchant=other, unit_price=1000), quantity=2)
        carts.append(cart)
    summaries = cart_pricing_summaries(carts=carts)
    shipping = [[group.shipping for group in summary.groups] for summary in summaries]
    assert shipping == [[4, 700], [3, 700], [3, 700], [2, 700], [1, 700], [1, 700]]
    assert summaries == [cart_pricing_summary_via_sql(cart=cart) for cart in carts]
    assert [summary.total for summary in summaries] == [3704, 3703, 3703, 3702, 3701, 3701]


def test_carts_keep_their_order_and_empty_or_unavailable_carts_cost_nothing():
    inactive = MerchantFactory(active=False)
    full = CartFactory(postal_code="10115")
    CartLineFactory(cart=full, offer=OfferFactory(unit_price=250), quantity=2)
    empty = CartFactory()
    gone = CartFactory()
    CartLineFactory(cart=gone, offer=OfferFactory(merchant=inactive))
    summaries = cart_pricing_summaries(carts=[gone, full, empty, full])
    assert [summary.cart_id for summary in summaries] == [gone.pk, full.pk, empty.pk, full.pk]
    assert [summary.total for summary in summaries] == [0, 500 + 499 + 100, 0, 1099]
    assert [line.problem for line in summaries[0].unavailable] == ["merchant_inactive"]
    assert summaries[2].is_empty
    assert cart_pricing_summaries(carts=[]) == []


def _carts_over_merchants(n_carts: int) -> list:
    merchants = MerchantFactory.create_batch(3)
    ShippingZoneFactory(merchant=merchants[0], postal_prefix="1", base_fee=99)
    ShippingZoneFactory(merchant=merchants[1], postal_prefix="", base_fee=0)
    carts = []
    for index in range(n_carts):
        cart = CartFactory(postal_code=["10115", "20095", ""][index % 3])
        for merchant in merchants[: 1 + index % 3]:
            CartLineFactory(cart=cart, offer=OfferFactory(merchant=merchant))
        carts.append(cart)
    return carts


@pytest.mark.parametrize("n_carts", [1, 7, 40])
def test_batch_queries_do_not_grow_with_carts(n_carts, django_assert_num_queries):
    carts = _carts_over_merchants(n_carts)
    zone_index_invalidate()
    # The lines of every cart; then merchants and zones once, to rebuild the index.
    with django_assert_num_queries(3):
        cart_pricing_summaries(carts=carts)
    with django_assert_num_queries(1):
        summaries = cart_pricing_summaries(carts=carts)
    assert len(summaries) == n_carts
    with django_assert_num_queries(1):
        cart_pricing_summary(cart=carts[-1])


def test_every_destination_is_resolved_in_one_batched_index_call(monkeypatch):
    from storefront.catalog import shipping_selectors as shipping

    carts = _carts_over_merchants(9)
    calls = []
    resolve = shipping.shipping_rules_for_destinations

    def counted(*, pairs):
        calls.append(list(pairs))
        return resolve(pairs=pairs)

    monkeypatch.setattr(shipping, "shipping_rules_for_destinations", counted)
    cart_pricing_summaries(carts=carts)
    (pairs,) = calls
    # Three merchants over three destinations, each (merchant, destination) asked once.
    assert len(pairs) == len(set(pairs)) == 6


def test_a_merchant_newer_than_the_index_is_resolved_in_sql(django_assert_num_queries):
    known = CartFactory(postal_code="10115")
    CartLineFactory(cart=known, offer=OfferFactory())
    zone_index_current()
    # Written inside this (never committed) transaction: the index has not seen it.
    newcomer = MerchantFactory(base_fee=800)
    ShippingZoneFactory(merchant=newcomer, postal_prefix="101", base_fee=1, per_extra_unit=0)
    cart = CartFactory(postal_code="10115")
    CartLineFactory(cart=cart, offer=OfferFactory(merchant=newcomer, unit_price=100))
    with django_assert_num_queries(2):
        summaries = cart_pricing_summaries(carts=[known, cart])
    assert summaries[1].groups[0].shipping_rule.zone_prefix == "101"
    assert summaries == [cart_pricing_summary_via_sql(cart=c) for c in (known, cart)]


def test_a_committed_zone_or_merchant_change_reprices(django_capture_on_commit_callbacks):
    merchant = MerchantFactory(base_fee=500, per_extra_unit=0)
    cart = CartFactory(postal_code="10115")
    CartLineFactory(cart=cart, offer=OfferFactory(merchant=merchant, unit_price=1000))
    assert cart_pricing_summary(cart=cart).shipping == 500
    with django_capture_on_commit_callbacks(execute=True):
        zone = ShippingZoneFactory(merchant=merchant, postal_prefix="10", base_fee=7)
    assert cart_pricing_summary(cart=cart).shipping == 7
    with django_capture_on_commit_callbacks(execute=True):
        zone.base_fee = 8
        zone.save()
    assert cart_pricing_summaries(carts=[cart])[0].shipping == 8
    with django_capture_on_commit_callbacks(execute=True):
        zone.delete()
        merchant.base_fee = 600
        merchant.save()
    assert cart_pricing_summary(cart=cart).shipping == 600
    assert cart_pricing_summary(cart=cart) == cart_pricing_summary_via_sql(cart=cart)


def test_product_page_terms_need_no_query_while_the_index_is_fresh(django_assert_num_queries):
    merchants = MerchantFactory.create_batch(4, with_discount=True)
    ShippingZoneFactory(merchant=merchants[0], postal_prefix="1", base_fee=99)
    zone_index_current()
    with django_assert_num_queries(0):
        terms = merchant_terms_for_merchants(merchants=merchants, postal_code="10115")
    assert terms == merchant_terms_for_destination(
        merchant_ids=[merchant.pk for merchant in merchants], postal_code="10115"
    )
    assert terms[merchants[0].pk].shipping.base_fee == 99


class TestProductCheapestOffer:
    def test_cheapest_with_enough_stock_ties_to_the_lowest_merchant(
        self, django_assert_num_queries
    ):
        product = ProductFactory()
        OfferFactory(product=product, unit_price=100, active=False)
        OfferFactory(product=product, unit_price=110, merchant__active=False)
        OfferFactory(product=product, unit_price=120, stock=2)
        first, second = MerchantFactory.create_batch(2)
        tie_low = OfferFactory(product=product, unit_price=150, merchant=first, stock=None)
        OfferFactory(product=product, unit_price=150, merchant=second, stock=9)
        with django_assert_num_queries(1):
            offer = product_cheapest_offer(product=product, quantity=2)
        assert offer.pk != tie_low.pk and offer.unit_price == 120
        assert offer.merchant.name
        assert product_cheapest_offer(product=product.pk, quantity=3) == tie_low

    def test_none_when_nobody_has_enough(self):
        product = ProductFactory()
        OfferFactory(product=product, stock=1)
        assert product_cheapest_offer(product=product, quantity=2) is None
