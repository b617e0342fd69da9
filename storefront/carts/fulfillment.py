"""Which warehouse a cart line ships from (pricing contract version 2), for the cart's pages,
its price, checkout and the engine problem alike.

A line of a merchant with no active warehouse (version 1) has no warehouse. A line of a
version 2 merchant ships from a node that is *eligible* for it: an active warehouse of the
merchant with a parcel rate for the cart's destination and a stock row for the line's offer
covering its quantity. The line's remembered ``CartLine.warehouse`` is kept while it stays
eligible; otherwise the first eligible node in warehouse id order stands in, so a cart whose
warehouse ran short still prices (and checks out) from where the stock is. No eligible node:
the line cannot be bought as it stands (``insufficient_stock``).
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from django.db.models import Exists, OuterRef

from storefront.fulfillment.selectors import (
    FulfillmentNode,
    merchant_nodes_for_destination,
    offer_stock_by_warehouse,
)
from storefront.models import Warehouse
from storefront.models.catalog import most_at_one, stock_covers


def merchant_has_warehouse() -> Exists:
    """An annotation for a query of offers (or of rows with ``merchant_id``): whether the
    merchant ships from warehouses (version 2). Read with the offers, it costs a v1 cart no
    query of its own."""
    return Exists(Warehouse.objects.filter(merchant_id=OuterRef("merchant_id"), active=True))


def line_merchant_has_warehouse() -> Exists:
    """``merchant_has_warehouse`` for a query of cart lines (through their offer)."""
    return Exists(Warehouse.objects.filter(merchant_id=OuterRef("offer__merchant_id"), active=True))


@dataclass(frozen=True)
class CartNodes:
    """The nodes of a cart's version 2 merchants for its destination, and the stock of their
    offers per warehouse (``None``: unlimited)."""

    nodes: Mapping[int, tuple[FulfillmentNode, ...]] = field(default_factory=dict)
    stock: Mapping[int, Mapping[int, int | None]] = field(default_factory=dict)

    def is_v2(self, merchant_id: int) -> bool:
        return merchant_id in self.nodes

    def node(self, merchant_id: int, warehouse_id: int) -> FulfillmentNode | None:
        for node in self.nodes.get(merchant_id, ()):
            if node.warehouse_id == warehouse_id:
                return node
        return None

    def eligible(
        self, *, merchant_id: int, offer_id: int, quantity: int
    ) -> tuple[FulfillmentNode, ...]:
        """The merchant's nodes that ship ``quantity`` of the offer to the destination, in
        warehouse id order."""
        stock = self.stock.get(offer_id, {})
        return tuple(
            node
            for node in self.nodes.get(merchant_id, ())
            if node.warehouse_id in stock and stock_covers(stock[node.warehouse_id], quantity)
        )

    def line_node(
        self, *, merchant_id: int, offer_id: int, quantity: int, warehouse_id: int | None
    ) -> FulfillmentNode | None:
        """Where a line of a version 2 merchant ships from now (see the module): its own
        warehouse while eligible, else the first eligible node, else ``None``."""
        eligible = self.eligible(merchant_id=merchant_id, offer_id=offer_id, quantity=quantity)
        for node in eligible:
            if node.warehouse_id == warehouse_id:
                return node
        return eligible[0] if eligible else None

    def stock_at(self, offer_id: int, warehouse_id: int) -> int | None:
        return self.stock.get(offer_id, {}).get(warehouse_id, 0)

    def ships_at_most(self, *, merchant_id: int, offer_id: int) -> int | None:
        """The most units of the offer one line can have (``None``: unlimited): the stock of
        the merchant's best-stocked node that ships to the destination. A line ships whole
        from one node, so this is never the sum over nodes."""
        stock = self.stock.get(offer_id, {})
        nodes = self.nodes.get(merchant_id, ())
        return most_at_one(stock[n.warehouse_id] for n in nodes if n.warehouse_id in stock)


def short_of_stock_note(
    *, merchant_name: str, most: int | None, from_warehouses: bool, total: int | None
) -> str:
    """Why a line cannot have its quantity, as a clause the pages and the API complete: "only
    3 left at Acme", or for a merchant with warehouses "only 2 can ship from one warehouse of
    Acme" (``most``, never the sum over its warehouses, ``total``: a line ships from one)."""
    if not most:
        if from_warehouses and total != 0:
            return f"no warehouse of {merchant_name} that ships to your address has it"
        return f"sold out at {merchant_name}"
    if from_warehouses:
        return f"only {most} can ship from one warehouse of {merchant_name}"
    return f"only {most} left at {merchant_name}"


def cart_nodes_read(
    *, merchant_ids: Iterable[int], offer_ids: Iterable[int], postal_code: str | None
) -> CartNodes:
    """``CartNodes`` for the version 2 merchants ``merchant_ids`` (the caller knows which they
    are, e.g. from ``merchant_has_warehouse``) and their ``offer_ids``: three queries (nodes,
    rates, stock), none when ``merchant_ids`` is empty."""
    ids = set(merchant_ids)
    if not ids:
        return CartNodes()
    nodes = merchant_nodes_for_destination(merchant_ids=ids, postal_code=postal_code)
    stock = offer_stock_by_warehouse(offer_ids=offer_ids)
    # A merchant whose last warehouse went off since the caller read it is v1 again: absent.
    return CartNodes(nodes=nodes, stock=stock)


def node_spec(node: FulfillmentNode) -> dict:
    """A node's ``shipping`` as the contract writes it."""
    return {
        "base_fee": node.base_fee,
        "per_extra_unit": node.per_extra_unit,
        "weight_tiers": [{"up_to_g": up, "fee": fee} for up, fee in node.tiers],
        "per_kg_over": node.per_kg_over,
    }
