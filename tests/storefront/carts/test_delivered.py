"""Delivered cost: an offer ranks by what adding it adds to the cart's total for its
destination (items, shipping, discounts), priced by the cart's own routine, to the cent."""

import random

import pytest
from django.db import transaction

from storefront.carts.delivered import (
    CartBasis,
    offers_delivered_cost,
    product_cheapest_delivered_offer,
)
from storefront.carts.pricing_summary import (
    cart_pricing_summary,
    cart_pricing_summary_for_product,
)
from storefront.carts.services import cart_line_add
from storefront.catalog.selectors import product_offers_read
from storefront.catalog.shipping_selectors import merchant_terms_for_merchants
from storefront.models import Cart, Product
from tests.factories import (
    CartFactory,
    CartLineFactory,
    MerchantFactory,
    OfferFactory,
    ProductFactory,
    ShippingZoneFactory,
)

pytestmark = pytest.mark.django_db


def ranking(product: Product, cart: Cart | None, *, postal_code: str = "", quantity: int = 1):
    offers = product_offers_read(product=product)
    terms = merchant_terms_for_merchants(
        merchants=[offer.merchant for offer in offers], postal_code=postal_code
    )
    summary = cart_pricing_summary(cart=cart) if cart is not None else None
    basis = CartBasis.from_summary(summary, product_id=product.pk)
    return offers_delivered_cost(offers=offers, terms=terms, basis=basis, quantity=quantity)


@pytest.fixture
def blue_and_coastal():
    """The shop's reported case: the lower item price pays 4.95 shipping, the other ships free."""
    product = ProductFactory(name="Kettle")
    blue = MerchantFactory(name="Blue Trading", base_fee=495, per_extra_unit=0)
    coastal = MerchantFactory(name="Coastal Market", base_fee=0, per_extra_unit=0)
    blue_offer = OfferFactory(product=product, merchant=blue, unit_price=5769)
    coastal_offer = OfferFactory(product=product, merchant=coastal, unit_price=6089)
    return product, blue_offer, coastal_offer


def test_free_shipping_beats_a_lower_item_price(blue_and_coastal):
    product, blue_offer, coastal_offer = blue_and_coastal
    costs = ranking(product, None)
    assert [(c.offer_id, c.increment, c.extra) for c in costs] == [
        (coastal_offer.pk, 6089, 0),
        (blue_offer.pk, 6264, 495),
    ]
    assert (
        product_cheapest_delivered_offer(product=product, cart=None, postal_code="", quantity=1)
        == coastal_offer
    )


def test_a_merchant_the_cart_already_pays_shipping_to_adds_none(blue_and_coastal):
    product, blue_offer, coastal_offer = blue_and_coastal
    cart = CartFactory()
    CartLineFactory(cart=cart, offer=OfferFactory(merchant=blue_offer.merchant, unit_price=1000))
    costs = ranking(product, cart)
    assert [(c.offer_id, c.increment, c.joins_cart) for c in costs] == [
        (blue_offer.pk, 5769, True),
        (coastal_offer.pk, 6089, False),
    ]
    assert (
        product_cheapest_delivered_offer(product=product, cart=cart, postal_code="", quantity=1)
        == blue_offer
    )


def test_reaching_free_shipping_takes_the_parcel_fee_off():
    product = ProductFactory()
    threshold = MerchantFactory(base_fee=495, per_extra_unit=0, free_over=5000)
    other = MerchantFactory(base_fee=0, per_extra_unit=0)
    near = OfferFactory(product=product, merchant=threshold, unit_price=1200)
    OfferFactory(product=product, merchant=other, unit_price=1000)
    cart = CartFactory()
    CartLineFactory(cart=cart, offer=OfferFactory(merchant=threshold, unit_price=4000))
    (best, _) = ranking(product, cart)
    assert (best.offer_id, best.increment, best.extra) == (near.pk, 1200 - 495, -495)
    assert (best.shipping_change, best.unlocks_free_shipping) == (-495, True)


def test_the_destination_picks_the_zone_rate():
    product = ProductFactory()
    zoned = MerchantFactory(base_fee=899, per_extra_unit=0)
    ShippingZoneFactory(merchant=zoned, postal_prefix="10", base_fee=0, per_extra_unit=0)
    flat = MerchantFactory(base_fee=300, per_extra_unit=0)
    zoned_offer = OfferFactory(product=product, merchant=zoned, unit_price=2000)
    flat_offer = OfferFactory(product=product, merchant=flat, unit_price=2100)
    assert ranking(product, None, postal_code="10115")[0].offer_id == zoned_offer.pk
    assert ranking(product, None, postal_code="80331")[0].offer_id == flat_offer.pk
    assert ranking(product, None, postal_code="")[0].offer_id == flat_offer.pk


def test_offers_that_cannot_supply_the_line_rank_last():
    product = ProductFactory()
    scarce = OfferFactory(product=product, unit_price=100, stock=1)
    plenty = OfferFactory(product=product, unit_price=5000, stock=None)
    costs = ranking(product, None, quantity=2)
    assert [(c.offer_id, c.eligible) for c in costs] == [(plenty.pk, True), (scarce.pk, False)]
    assert (
        product_cheapest_delivered_offer(product=product, cart=None, postal_code="", quantity=2)
        == plenty
    )


class _Rollback(Exception):
    pass


def _total_after_add(cart: Cart, offer, quantity: int) -> int:
    """The cart's total once ``cart_line_add`` has added the offer, rolled back after."""
    total = None
    try:
        with transaction.atomic():
            cart_line_add(cart=cart, offer=offer, quantity=quantity)
            total = cart_pricing_summary(cart=Cart.objects.get(pk=cart.pk)).total
            raise _Rollback
    except _Rollback:
        pass
    assert total is not None
    return total


@pytest.mark.parametrize("seed", range(6))
def test_increment_is_what_the_cart_total_grows_by(seed):
    """Random merchants (thresholds, discounts, zones), a random cart that may already hold
    the product (from any merchant, even a sold-out one): every offer's increment equals
    the cart's total after ``cart_line_add`` minus before, to the cent."""
    rng = random.Random(seed)
    merchants = []
    for _ in range(5):
        min_units = rng.choice([None, 2, 3])
        merchants.append(
            MerchantFactory(
                base_fee=rng.choice([0, 299, 495]),
                per_extra_unit=rng.choice([0, 100]),
                free_over=rng.choice([None, 3000, 6000]),
                discount_min_units=min_units,
                discount_basis_points=None if min_units is None else rng.choice([500, 1000]),
            )
        )
    for merchant in merchants[:2]:
        ShippingZoneFactory(merchant=merchant, postal_prefix="1", base_fee=rng.choice([0, 150]))
    products = [ProductFactory() for _ in range(4)]
    offers = {
        (product.pk, merchant.pk): OfferFactory(
            product=product,
            merchant=merchant,
            unit_price=rng.randint(500, 4000),
            stock=rng.choice([None, 5, 2]),
        )
        for product in products
        for merchant in rng.sample(merchants, 4)
    }
    product = products[0]
    postal_code = rng.choice(["", "10115", "80331"])
    cart = CartFactory(postal_code=postal_code)
    for other in products[rng.randint(0, 1) :]:
        choices = [offer for (pid, _), offer in offers.items() if pid == other.pk]
        CartLineFactory(cart=cart, offer=rng.choice(choices), quantity=rng.randint(1, 2))
    if rng.random() < 0.5:
        line = cart.lines.filter(product=product).first()
        if line is not None:
            line.offer.stock = 0
            line.offer.save()
    quantity = rng.randint(1, 2)
    before = cart_pricing_summary(cart=cart).total
    for cost in ranking(product, cart, postal_code=postal_code, quantity=quantity):
        if not cost.eligible:
            continue
        offer = next(o for o in offers.values() if o.pk == cost.offer_id)
        assert cost.increment == _total_after_add(cart, offer, quantity) - before


def test_a_summary_for_a_product_prices_its_sellers_groups_as_the_whole_cart_does():
    merchants = [MerchantFactory(free_over=3000) for _ in range(4)]
    cart = CartFactory(postal_code="10115")
    product = ProductFactory()
    OfferFactory(product=product, merchant=merchants[0])
    # The product's line is at merchants[3], whose offer of it is no longer active.
    CartLineFactory(
        cart=cart, offer=OfferFactory(product=product, merchant=merchants[3], active=False)
    )
    for merchant in merchants:
        CartLineFactory(cart=cart, offer=OfferFactory(merchant=merchant, unit_price=1500))
    whole = {group.merchant_id: group for group in cart_pricing_summary(cart=cart).groups}
    part = cart_pricing_summary_for_product(cart=cart, product_id=product.pk)
    assert {group.merchant_id: group.cost for group in part.groups} == {
        merchant.pk: whole[merchant.pk].cost for merchant in (merchants[0], merchants[3])
    }
    assert [line.product_id for line in part.unavailable] == [product.pk]
