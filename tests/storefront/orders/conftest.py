import itertools

import pytest

from storefront.carts.pricing_summary import cart_pricing_summary
from storefront.checkout.address import ShippingAddress
from storefront.checkout.review import review_token_make
from storefront.checkout.services import order_place
from tests.factories import CartFactory, CartLineFactory, MerchantFactory, OfferFactory

POSTAL_CODE = "10115"
_keys = itertools.count(1)


def address(**overrides) -> ShippingAddress:
    fields = {
        "email": "ada@example.com",
        "full_name": "Ada Lovelace",
        "address_line": "Invalidenstr. 1",
        "city": "Berlin",
        "postal_code": POSTAL_CODE,
        "country": "DE",
    }
    return ShippingAddress(**{**fields, **overrides})


def review_token(cart) -> str:
    return review_token_make(cart_pricing_summary(cart=cart))


def new_key() -> str:
    return f"test-key-{next(_keys):06d}"


def place(cart, *, user=None, token=None, key=None, **address_overrides):
    return order_place(
        cart=cart,
        user=user if user is not None else cart.owner,
        address=address(**address_overrides),
        review_token=token if token is not None else review_token(cart),
        idempotency_key=key or new_key(),
    )


@pytest.fixture
def two_merchant_cart(db):
    """A signed-in shopper's cart: 2 units at merchant A (stock 5), 1 unit at merchant B
    (unlimited), with a discount at A."""
    cart = CartFactory(postal_code=POSTAL_CODE)
    merchant_a = MerchantFactory(discount_min_units=2, discount_basis_points=1000)
    merchant_b = MerchantFactory(free_over=1000)
    CartLineFactory(
        cart=cart, offer=OfferFactory(merchant=merchant_a, unit_price=1250, stock=5), quantity=2
    )
    CartLineFactory(cart=cart, offer=OfferFactory(merchant=merchant_b, unit_price=799), quantity=1)
    cart.refresh_from_db()
    return cart
