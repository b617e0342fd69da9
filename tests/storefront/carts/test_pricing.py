"""The storefront prices carts through gpu_engine; these pin the spec's edge cases."""

from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_engine.reference import reference_cost
from storefront.carts.pricing import (
    PricedLine,
    Shipment,
    missing_for_free_shipping,
    shipments_price,
    shipments_problem,
)
from storefront.catalog.shipping import Discount, ShippingRule


def shipment(merchant_id, lines, *, base=499, extra=100, free_over=None, discount=None):
    return Shipment(
        merchant_id=merchant_id,
        shipping=ShippingRule(base_fee=base, per_extra_unit=extra, free_over=free_over),
        discount=discount,
        lines=tuple(PricedLine(line_id, quantity, price) for line_id, quantity, price in lines),
    )


def test_shipping_counts_every_unit_after_the_first():
    costs = shipments_price([shipment(7, [(1, 2, 1000), (2, 1, 500)])])
    cost = costs[7]
    assert (cost.subtotal, cost.units, cost.discount, cost.shipping) == (2500, 3, 0, 699)
    assert cost.cost == 3199
    assert cost.missing_for_free_shipping is None


def test_discount_applies_exactly_at_min_units_and_rounds_down():
    discount = Discount(min_units=3, basis_points=750)
    at = shipments_price([shipment(1, [(1, 3, 333)], discount=discount)])[1]
    below = shipments_price([shipment(1, [(1, 2, 333)], discount=discount)])[1]
    assert at.discount == 999 * 750 // 10_000 == 74
    assert below.discount == 0


def test_free_shipping_exactly_at_the_threshold_after_discount():
    discount = Discount(min_units=2, basis_points=1000)
    # 2 x 2500 = 5000, minus 10% = 4500 goods: exactly the threshold.
    free = shipments_price([shipment(1, [(1, 2, 2500)], free_over=4500, discount=discount)])[1]
    assert (free.goods, free.shipping, free.cost, free.missing_for_free_shipping) == (
        4500,
        0,
        4500,
        0,
    )
    # The discount pushes goods below the threshold: shipping is due again.
    short = shipments_price([shipment(1, [(1, 2, 2500)], free_over=4600, discount=discount)])[1]
    assert (short.shipping, short.missing_for_free_shipping) == (599, 100)


def test_zero_fees_need_nothing_more_for_free_shipping():
    cost = shipments_price([shipment(1, [(1, 1, 100)], base=0, extra=0, free_over=5000)])[1]
    assert cost.shipping == 0
    assert cost.missing_for_free_shipping == 0
    assert missing_for_free_shipping(goods=10, shipping=0, free_over=None) is None


def test_empty_input_and_empty_shipments_cost_nothing():
    assert shipments_price([]) == {}
    assert shipments_price([shipment(1, [])]) == {}


line_strategy = st.tuples(st.integers(1, 5), st.integers(0, 10_000))
shipment_strategy = st.fixed_dictionaries(
    {
        "lines": st.lists(line_strategy, min_size=1, max_size=4),
        "base": st.integers(0, 1000),
        "extra": st.integers(0, 500),
        "free_over": st.none() | st.integers(0, 30_000),
        "discount": st.none()
        | st.builds(Discount, min_units=st.integers(1, 6), basis_points=st.integers(0, 10_000)),
    }
)


@settings(max_examples=60, deadline=None)
@given(st.lists(shipment_strategy, min_size=1, max_size=4))
def test_total_equals_the_engines_independent_reference(specs):
    shipments, line_id = [], 0
    for merchant_id, spec in enumerate(specs, start=1):
        lines = []
        for quantity, price in spec["lines"]:
            line_id += 1
            lines.append((line_id, quantity, price))
        shipments.append(
            shipment(
                merchant_id,
                lines,
                base=spec["base"],
                extra=spec["extra"],
                free_over=spec["free_over"],
                discount=spec["discount"],
            )
        )
    problem = shipments_problem(shipments)
    assignment = {str(line.line_id): str(s.merchant_id) for s in shipments for line in s.lines}
    costs = shipments_price(shipments)
    assert sum(cost.cost for cost in costs.values()) == reference_cost(problem, assignment)
    for cost in costs.values():
        assert cost.cost == cost.goods + cost.shipping
        assert cost.goods == cost.subtotal - cost.discount
