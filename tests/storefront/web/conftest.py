"""A small marketplace for the shopper pages: three products, each sold by a dear merchant
(where the tests put the cart), a bundle merchant with free shipping over 50.00 and a cheap
merchant with dear shipping, so Improve cart has a real choice to make."""

from dataclasses import dataclass

import pytest
from django.urls import reverse

from storefront.models import Category, Merchant, Offer, Product
from tests.factories import (
    CategoryFactory,
    MerchantFactory,
    OfferFactory,
    ProductFactory,
    ShippingZoneFactory,
    UserFactory,
)


@dataclass
class Market:
    gadgets: Category
    books: Category
    dear: Merchant
    bundle: Merchant
    cheap: Merchant
    products: list[Product]
    dear_offers: list[Offer]
    bundle_offers: list[Offer]
    cheap_offers: list[Offer]


@pytest.fixture
def market(db) -> Market:
    gadgets = CategoryFactory(name="Gadgets", slug="gadgets")
    books = CategoryFactory(name="Books", slug="books")
    dear = MerchantFactory(name="Dear Shop", base_fee=499, per_extra_unit=100)
    bundle = MerchantFactory(
        name="Bundle Shop",
        base_fee=599,
        per_extra_unit=0,
        free_over=5000,
        discount_min_units=3,
        discount_basis_points=500,
    )
    cheap = MerchantFactory(name="Cheap Shop", base_fee=899, per_extra_unit=300)
    # Berlin pays less at the cheap shop: a zone rule the product page must show.
    ShippingZoneFactory(merchant=cheap, postal_prefix="10", base_fee=199, per_extra_unit=50)
    products, dear_offers, bundle_offers, cheap_offers = [], [], [], []
    for index, name in enumerate(["Voltra Widget", "Nexon Gizmo", "Ampere Doohickey"]):
        product = ProductFactory(
            name=name, slug=f"{name.lower().replace(' ', '-')}", category=gadgets
        )
        products.append(product)
        dear_offers.append(OfferFactory(product=product, merchant=dear, unit_price=2500 + index))
        bundle_offers.append(OfferFactory(product=product, merchant=bundle, unit_price=2300))
        cheap_offers.append(OfferFactory(product=product, merchant=cheap, unit_price=2200, stock=3))
    return Market(
        gadgets, books, dear, bundle, cheap, products, dear_offers, bundle_offers, cheap_offers
    )


@pytest.fixture
def shopper(db):
    return UserFactory(username="alice")


def add_to_cart(client, offer: Offer, quantity: int = 1, **extra):
    return client.post(reverse("cart_add"), {"offer": offer.pk, "quantity": quantity, **extra})
