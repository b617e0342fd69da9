"""Orders add up to the cent: the packages to the order total, and the order total to the
cart total the shopper reviewed, over random carts (shipping, zones' free thresholds,
discounts, quantities)."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storefront.carts.pricing_summary import cart_pricing_summary
from tests.factories import CartFactory, CartLineFactory, MerchantFactory, OfferFactory
from tests.storefront.orders.conftest import POSTAL_CODE, place

merchant_terms = st.fixed_dictionaries(
    {
        "base_fee": st.integers(0, 2000),
        "per_extra_unit": st.integers(0, 500),
        "free_over": st.none() | st.integers(0, 20000),
        "discount": st.none() | st.tuples(st.integers(1, 5), st.integers(0, 10000)),
    }
)
cart_lines = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 99999), st.integers(1, 12)),
    min_size=1,
    max_size=8,
)


def _spec_cost(lines, terms) -> int:
    """The contract's cost(m), written out from cart-pricing.md as the test's reference."""
    subtotal = sum(quantity * price for price, quantity in lines)
    units = sum(quantity for _, quantity in lines)
    discount = 0
    if terms["discount"] and units >= terms["discount"][0]:
        discount = subtotal * terms["discount"][1] // 10000
    goods = subtotal - discount
    free = terms["free_over"] is not None and goods >= terms["free_over"]
    shipping = 0 if free else terms["base_fee"] + terms["per_extra_unit"] * (units - 1)
    return goods + shipping


@pytest.mark.slow
@pytest.mark.django_db
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(terms=st.lists(merchant_terms, min_size=4, max_size=4), lines=cart_lines)
def test_packages_add_up_to_the_order_and_the_order_to_the_reviewed_cart(terms, lines):
    merchants = [
        MerchantFactory(
            base_fee=t["base_fee"],
            per_extra_unit=t["per_extra_unit"],
            free_over=t["free_over"],
            discount_min_units=t["discount"][0] if t["discount"] else None,
            discount_basis_points=t["discount"][1] if t["discount"] else None,
        )
        for t in terms
    ]
    cart = CartFactory(postal_code=POSTAL_CODE)
    expected: dict[int, list[tuple[int, int]]] = {}
    for merchant_index, price, quantity in lines:
        offer = OfferFactory(merchant=merchants[merchant_index], unit_price=price, stock=50)
        CartLineFactory(cart=cart, offer=offer, quantity=quantity)
        expected.setdefault(merchant_index, []).append((price, quantity))
    cart.refresh_from_db()
    reviewed_total = cart_pricing_summary(cart=cart).total

    order = place(cart)

    packages = list(order.merchant_orders.all())
    assert sum(package.cost for package in packages) == order.total == reviewed_total
    assert order.total == order.subtotal - order.discount + order.shipping
    assert order.total == sum(_spec_cost(rows, terms[i]) for i, rows in expected.items())
    assert len(packages) == len(expected)
    for package in packages:
        assert package.cost == package.subtotal - package.discount + package.shipping
        assert package.subtotal == sum(line.line_total for line in package.lines.all())
