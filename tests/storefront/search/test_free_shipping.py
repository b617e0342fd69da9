from hypothesis import given, settings
from hypothesis import strategies as st

from storefront.catalog.shipping import Discount, ShippingRule
from storefront.search.free_shipping import _ships_free, free_from_price


def test_free_from_price_without_discount():
    assert free_from_price(1, ShippingRule(0, 100, None), None) == 0
    assert free_from_price(1, ShippingRule(499, 0, None), None) is None
    assert free_from_price(1, ShippingRule(499, 0, 5000), None) == 5000
    # A discount from 2 units never applies to one unit.
    assert free_from_price(1, ShippingRule(499, 0, 5000), Discount(2, 1000)) == 5000


@settings(max_examples=25, deadline=None)
@given(
    free_over=st.integers(min_value=1, max_value=100_000),
    basis_points=st.integers(min_value=0, max_value=9_999),
)
def test_free_from_price_is_the_lowest_price_that_ships_free(free_over, basis_points):
    """With a discount from one unit, goods are below the price: the threshold rises, and
    the contract's own pricing agrees at the threshold and one cent below it."""
    rule, discount = ShippingRule(499, 0, free_over), Discount(1, basis_points)
    price = free_from_price(7, rule, discount)
    assert price >= free_over
    assert _ships_free(price, 7, rule, discount)
    assert not _ships_free(price - 1, 7, rule, discount)
