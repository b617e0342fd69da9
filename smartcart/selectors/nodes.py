"""The engine problem of a cart with version 2 merchants (warehouses): a column per warehouse
that ships to the destination, one column per version 1 merchant (``CartProblem.from_columns``).

Node ids are strings of warehouse ids for version 2 merchants and the merchant's own id for a
version 1 merchant (the contract's reading of version 1 input), so a solution's
``(merchant, node)`` maps back to a warehouse with ``node_warehouse``.
"""

from collections.abc import Mapping, Sequence
from typing import Protocol, TypeVar

from gpu_engine import CartProblem
from storefront.carts.fulfillment import CartNodes
from storefront.catalog.shipping_selectors import MerchantTerms


class _Line(Protocol):
    @property
    def line_id(self) -> int: ...
    @property
    def quantity(self) -> int: ...
    @property
    def weight_g(self) -> int: ...


class _Offer(Protocol):
    @property
    def offer_id(self) -> int: ...
    @property
    def unit_price(self) -> int: ...
    @property
    def stock(self) -> int | None: ...


OfferT = TypeVar("OfferT", bound=_Offer)


def node_warehouse(nodes: CartNodes, merchant_id: int, node_id: str) -> int | None:
    """The warehouse behind a node of the problem (``None``: a version 1 merchant's node)."""
    return int(node_id) if nodes.is_v2(merchant_id) else None


def node_id_of(merchant_id: int, warehouse_id: int | None) -> str:
    """The problem's node id of a merchant's warehouse (``None``: its version 1 node)."""
    return str(merchant_id if warehouse_id is None else warehouse_id)


def problem_v2(
    lines: Sequence[_Line],
    offers: Mapping[tuple[int, int], _Offer],
    merchants: Mapping[int, MerchantTerms],
    nodes: CartNodes,
) -> CartProblem:
    """The cart's problem with each version 2 merchant's warehouses as its nodes.

    ``merchants`` holds every merchant with at least one offer in ``offers``; a version 2
    merchant must have a node here (the caller leaves out those that cannot ship). An offer of
    a version 2 merchant is an offer at each node where it has a stock row.
    """
    line_index = {line.line_id: i for i, line in enumerate(lines)}
    merchant_ids = sorted(merchants)
    column_merchant: list[int] = []
    node_ids: list[str] = []
    base_fee: list[int] = []
    per_extra_unit: list[int] = []
    tiers: list[list[tuple[int, int]]] = []
    per_kg_over: list[int] = []
    columns: dict[tuple[int, int | None], int] = {}
    for j, merchant_id in enumerate(merchant_ids):
        if nodes.is_v2(merchant_id):
            for node in nodes.nodes[merchant_id]:
                columns[(merchant_id, node.warehouse_id)] = len(node_ids)
                column_merchant.append(j)
                node_ids.append(node_id_of(merchant_id, node.warehouse_id))
                base_fee.append(node.base_fee)
                per_extra_unit.append(node.per_extra_unit)
                tiers.append(list(node.tiers))
                per_kg_over.append(node.per_kg_over)
        else:
            shipping = merchants[merchant_id].shipping
            columns[(merchant_id, None)] = len(node_ids)
            column_merchant.append(j)
            node_ids.append(node_id_of(merchant_id, None))
            base_fee.append(shipping.base_fee)
            per_extra_unit.append(shipping.per_extra_unit)
            tiers.append([])
            per_kg_over.append(0)
    offer_item: list[int] = []
    offer_column: list[int] = []
    offer_price: list[int] = []
    offer_stock: list[int] = []
    for (line_id, merchant_id), offer in offers.items():
        if nodes.is_v2(merchant_id):
            stock = nodes.stock.get(offer.offer_id, {})
            placed = [
                (columns[(merchant_id, node.warehouse_id)], stock[node.warehouse_id])
                for node in nodes.nodes[merchant_id]
                if node.warehouse_id in stock
            ]
        else:
            placed = [(columns[(merchant_id, None)], offer.stock)]
        for column, units in placed:
            offer_item.append(line_index[line_id])
            offer_column.append(column)
            offer_price.append(offer.unit_price)
            offer_stock.append(-1 if units is None else units)
    terms = [merchants[merchant_id] for merchant_id in merchant_ids]
    return CartProblem.from_columns(
        item_ids=[str(line.line_id) for line in lines],
        quantities=[line.quantity for line in lines],
        weights=[line.weight_g for line in lines],
        merchant_ids=[str(merchant_id) for merchant_id in merchant_ids],
        free_over=[-1 if t.shipping.free_over is None else t.shipping.free_over for t in terms],
        disc_min_units=[t.discount.min_units if t.discount else 0 for t in terms],
        disc_bp=[t.discount.basis_points if t.discount else 0 for t in terms],
        column_merchant=column_merchant,
        node_ids=node_ids,
        base_fee=base_fee,
        per_extra_unit=per_extra_unit,
        weight_tiers=tiers,
        per_kg_over=per_kg_over,
        offer_item=offer_item,
        offer_column=offer_column,
        offer_price=offer_price,
        offer_stock=offer_stock,
    )


def offers_at_nodes(
    offers: Mapping[tuple[int, int], OfferT], nodes: CartNodes
) -> dict[tuple[int, int], OfferT]:
    """Leaves out the offers of version 2 merchants sold from none of their warehouses that
    ship to the destination (nothing there to buy)."""

    def shipped(merchant_id: int, offer: OfferT) -> bool:
        stock = nodes.stock.get(offer.offer_id, {})
        return any(node.warehouse_id in stock for node in nodes.nodes[merchant_id])

    return {
        key: offer
        for key, offer in offers.items()
        if not nodes.is_v2(key[1]) or shipped(key[1], offer)
    }
