"""Carts with real choices: each product sold by several merchants with different shipping,
so the cheapest way to buy the cart is not simply the lines as added. Shared by the
storefront and smartcart tests (storefront's tests never import smartcart's)."""

from tests.factories import (
    CartFactory,
    CartLineFactory,
    MerchantFactory,
    OfferFactory,
    ProductFactory,
    UserFactory,
)


def cart_with_choices(*, owner=None, lines: int = 3, quantity: int = 1):
    """A cart whose lines sit at an expensive merchant ``dear`` while ``bundle`` sells every
    product a little cheaper with free shipping over 50.00: moving everything is best."""
    dear = MerchantFactory(name="Dear Shop", base_fee=499, per_extra_unit=100)
    bundle = MerchantFactory(name="Bundle Shop", base_fee=599, per_extra_unit=0, free_over=5000)
    cheap = MerchantFactory(name="Cheap Shop", base_fee=899, per_extra_unit=300)
    cart = CartFactory(owner=owner or UserFactory())
    for index in range(lines):
        product = ProductFactory(name=f"Widget {index}")
        offer = OfferFactory(product=product, merchant=dear, unit_price=2500)
        OfferFactory(product=product, merchant=bundle, unit_price=2300)
        OfferFactory(product=product, merchant=cheap, unit_price=2200, stock=50)
        CartLineFactory(cart=cart, offer=offer, quantity=quantity)
    return cart
