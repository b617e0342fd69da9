"""The storefront's door to the one pricing routine of ``gpu_engine``.

``shared/spec/cart-pricing.md`` is written once, in ``gpu_engine.pricing`` (the njit function
every solver uses). The storefront never re-implements it: to price a cart as it stands, it
states the cart as a spec problem with exactly one offer per line (the line's current offer)
and asks ``gpu_engine.price_assignment`` for the per-merchant breakdown. What this module
adds is only for people: ``goods`` and how much more would unlock free shipping.

A version 2 merchant (one with warehouses) is stated with its nodes: each line names the
warehouse it ships from, and the breakdown carries a parcel per warehouse.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpu_engine import CartProblem, price_assignment
from storefront.carts.fulfillment import node_spec
from storefront.catalog.shipping import Discount, ShippingRule
from storefront.fulfillment.selectors import FulfillmentNode


@dataclass(frozen=True, slots=True)
class PricedLine:
    line_id: int
    quantity: int
    unit_price: int
    # Grams per unit (``Product.weight_g``) and, for a version 2 merchant, the line's node.
    weight_g: int = 0
    warehouse_id: int | None = None


@dataclass(frozen=True, slots=True)
class Shipment:
    """The lines one merchant ships, with that merchant's terms for the destination.

    ``nodes`` (version 2 merchants only): the merchant's warehouses by id, with their rates for
    the destination; each line's ``warehouse_id`` names one. ``shipping.free_over`` is then
    the merchant's threshold (its other fields are not used)."""

    merchant_id: int
    shipping: ShippingRule
    discount: Discount | None
    lines: tuple[PricedLine, ...]
    nodes: Mapping[int, FulfillmentNode] | None = None


@dataclass(frozen=True, slots=True)
class ParcelCost:
    """One parcel of a merchant: what a warehouse ships (``warehouse_id`` None: a version 1
    merchant's one parcel). ``fee`` is 0 when the merchant ships free."""

    warehouse_id: int | None
    warehouse_name: str
    line_ids: tuple[int, ...]
    units: int
    weight_g: int
    fee: int

    @property
    def weight_kg(self) -> str:
        return weight_kg(self.weight_g)


def weight_kg(grams: int) -> str:
    """Grams as the pages show them: kilograms to one decimal ("2.4"), rounded half up, in
    integers."""
    tenths = (grams + 50) // 100
    return f"{tenths // 10}.{tenths % 10}"


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
    parcels: tuple[ParcelCost, ...] = ()

    @property
    def ships_from_warehouses(self) -> bool:
        """A version 2 merchant: its parcels name warehouses (the pages show them)."""
        return any(parcel.warehouse_id is not None for parcel in self.parcels)


def missing_for_free_shipping(*, goods: int, shipping: int, free_over: int | None) -> int | None:
    if free_over is None:
        return None
    if shipping == 0:
        return 0
    return max(free_over - goods, 0)


def _merchant_spec(shipment: Shipment) -> dict:
    discount = shipment.discount.as_spec() if shipment.discount else None
    if shipment.nodes is None:
        return {
            "id": str(shipment.merchant_id),
            "shipping": shipment.shipping.as_spec(),
            "discount": discount,
        }
    used = sorted({line.warehouse_id for line in shipment.lines if line.warehouse_id is not None})
    return {
        "id": str(shipment.merchant_id),
        "free_over": shipment.shipping.free_over,
        "discount": discount,
        "nodes": [
            {"id": str(warehouse_id), "shipping": node_spec(shipment.nodes[warehouse_id])}
            for warehouse_id in used
        ],
    }


def _offer_spec(shipment: Shipment, line: PricedLine) -> dict:
    # Stock is the caller's check (it flags unavailable lines); here every line is priced.
    offer = {
        "item": str(line.line_id),
        "merchant": str(shipment.merchant_id),
        "price": line.unit_price,
        "stock": None,
    }
    if shipment.nodes is not None:
        offer["node"] = str(line.warehouse_id)
    return offer


def shipments_problem(shipments: Sequence[Shipment]) -> dict:
    """The spec problem whose only assignment is the given one (one offer per line)."""
    return {
        "items": [
            {"id": str(line.line_id), "quantity": line.quantity, "weight_g": line.weight_g}
            for shipment in shipments
            for line in shipment.lines
        ],
        "merchants": [_merchant_spec(shipment) for shipment in shipments],
        "offers": [
            _offer_spec(shipment, line) for shipment in shipments for line in shipment.lines
        ],
    }


def _assignment(shipments: Sequence[Shipment]) -> dict[str, str | list[str]]:
    assignment: dict[str, str | list[str]] = {}
    for shipment in shipments:
        for line in shipment.lines:
            merchant = str(shipment.merchant_id)
            assignment[str(line.line_id)] = (
                merchant if shipment.nodes is None else [merchant, str(line.warehouse_id)]
            )
    return assignment


def shipments_price(shipments: Sequence[Shipment]) -> dict[int, MerchantCost]:
    """``{merchant_id: MerchantCost}`` priced by ``gpu_engine.price_assignment``, each with its
    parcels.

    Merchants with no lines are left out (they cost 0); an empty input gives ``{}``.
    """
    shipments = [shipment for shipment in shipments if shipment.lines]
    if not shipments:
        return {}
    problem = CartProblem.from_dict(shipments_problem(shipments))
    by_id = {shipment.merchant_id: shipment for shipment in shipments}
    costs = {}
    for breakdown in price_assignment(problem, _assignment(shipments)):
        merchant_id = int(breakdown.merchant)
        shipment = by_id[merchant_id]
        goods = breakdown.subtotal - breakdown.discount
        costs[merchant_id] = MerchantCost(
            subtotal=breakdown.subtotal,
            units=breakdown.units,
            discount=breakdown.discount,
            goods=goods,
            shipping=breakdown.shipping,
            cost=breakdown.cost,
            missing_for_free_shipping=missing_for_free_shipping(
                goods=goods, shipping=breakdown.shipping, free_over=shipment.shipping.free_over
            ),
            parcels=tuple(
                parcel_cost(
                    nodes=shipment.nodes,
                    node=parcel.node,
                    line_ids=parcel.lines,
                    units=parcel.units,
                    weight_g=parcel.weight_g,
                    fee=parcel.fee,
                )
                for parcel in breakdown.parcels
            ),
        )
    return costs


def parcel_cost(
    *,
    nodes: Mapping[int, FulfillmentNode] | None,
    node: str,
    line_ids: Sequence[str],
    units: int,
    weight_g: int,
    fee: int,
) -> ParcelCost:
    """An engine parcel as the shop names it: ``node`` is a warehouse id of a version 2
    merchant (``nodes``), the merchant's own id for a version 1 one."""
    warehouse = None if nodes is None else nodes.get(int(node))
    return ParcelCost(
        warehouse_id=None if warehouse is None else warehouse.warehouse_id,
        warehouse_name="" if warehouse is None else warehouse.name,
        line_ids=tuple(int(line_id) for line_id in line_ids),
        units=units,
        weight_g=weight_g,
        fee=fee,
    )
