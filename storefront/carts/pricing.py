"""The storefront's door to the one pricing routine of ``gpu_engine``.

``shared/spec/cart-pricing.md`` is written once, in ``gpu_engine.pricing`` (the njit function
every solver uses). The storefront never re-implements it: to price a cart as it stands, it
states the cart as a spec problem with exactly one offer per line (the line's current offer)
and asks ``gpu_engine.price_assignment`` for the per-merchant breakdown. What this module
adds is only for people: ``goods`` and how much more would unlock free shipping.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from gpu_engine import CartProblem, price_assignment
from storefront.catalog.shipping import Discount, ShippingRule


@dataclass(frozen=True, slots=True)
class PricedLine:
    line_id: int
    quantity: int
    unit_price: int


@dataclass(frozen=True, slots=True)
class Shipment:
    """The lines one merchant ships, with that merchant's terms for the destination."""

    merchant_id: int
    shipping: ShippingRule
    discount: Discount | None
    lines: tuple[PricedLine, ...]


@dataclass(frozen=True, slots=True)
class MerchantCost:
    subtotal: int
    units: int
    discount: int
    goods: int
    shipping: int
    cost: int
    # Goods still to add for free shipping: None when the merchant never ships free,
    # 0 when shipping already costs nothing.
    missing_for_free_shipping: int | None


def missing_for_free_shipping(*, goods: int, shipping: int, free_over: int | None) -> int | None:
    if free_over is None:
        return None
    if shipping == 0:
        return 0
    return max(free_over - goods, 0)


def shipments_problem(shipments: Sequence[Shipment]) -> dict:
    """The spec problem whose only assignment is the given one (one offer per line)."""
    return {
        "items": [
            {"id": str(line.line_id), "quantity": line.quantity}
            for shipment in shipments
            for line in shipment.lines
        ],
        "merchants": [
            {
                "id": str(shipment.merchant_id),
                "shipping": shipment.shipping.as_spec(),
                "discount": shipment.discount.as_spec() if shipment.discount else None,
            }
            for shipment in shipments
        ],
        # Stock is the caller's check (it flags unavailable lines); here every line is priced.
        "offers": [
            {
                "item": str(line.line_id),
                "merchant": str(shipment.merchant_id),
                "price": line.unit_price,
                "stock": None,
            }
            for shipment in shipments
            for line in shipment.lines
        ],
    }


def shipments_price(shipments: Sequence[Shipment]) -> dict[int, MerchantCost]:
    """``{merchant_id: MerchantCost}`` priced by ``gpu_engine.price_assignment``.

    Merchants with no lines are left out (they cost 0); an empty input gives ``{}``.
    """
    shipments = [shipment for shipment in shipments if shipment.lines]
    if not shipments:
        return {}
    problem = CartProblem.from_dict(shipments_problem(shipments))
    assignment = {
        str(line.line_id): str(shipment.merchant_id)
        for shipment in shipments
        for line in shipment.lines
    }
    rules = {shipment.merchant_id: shipment.shipping for shipment in shipments}
    costs = {}
    for breakdown in price_assignment(problem, assignment):
        merchant_id = int(breakdown.merchant)
        goods = breakdown.subtotal - breakdown.discount
        costs[merchant_id] = MerchantCost(
            subtotal=breakdown.subtotal,
            units=breakdown.units,
            discount=breakdown.discount,
            goods=goods,
            shipping=breakdown.shipping,
            cost=breakdown.cost,
            missing_for_free_shipping=missing_for_free_shipping(
                goods=goods, shipping=breakdown.shipping, free_over=rules[merchant_id].free_over
            ),
        )
    return costs
