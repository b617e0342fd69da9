"""Checks of a cart's lines as read for its problem: which lines cannot be bought as they are
(refused with ``line_unavailable``), and where each version 2 line ships from now."""

from collections.abc import Mapping, Sequence
from typing import Protocol, TypeVar

from storefront.carts.fulfillment import CartNodes
from storefront.errors import Conflict


class _Snapshot(Protocol):
    @property
    def line_id(self) -> int: ...
    @property
    def product_name(self) -> str: ...
    @property
    def quantity(self) -> int: ...
    @property
    def offer_id(self) -> int: ...
    @property
    def merchant_id(self) -> int: ...
    @property
    def warehouse_id(self) -> int | None: ...


class _Row(Protocol):
    @property
    def snapshot(self) -> _Snapshot: ...
    @property
    def unavailable_reason(self) -> str | None: ...


class _Offer(Protocol):
    @property
    def stock(self) -> int | None: ...


R = TypeVar("R", bound=_Row)

NOT_AT_A_WAREHOUSE = "not in stock at a warehouse that ships here"


def refuse(unavailable: list[str]) -> None:
    if unavailable:
        raise Conflict(
            "Some lines cannot be bought as they are: "
            + "; ".join(unavailable)
            + ". Change or remove them first.",
            code="line_unavailable",
            field="lines",
        )


def check_other_sellers(
    rows: Sequence[_Row],
    sold_out: frozenset[int],
    offers: Mapping[tuple[int, int], _Offer],
) -> None:
    """Each sold-out line needs another merchant with enough stock."""
    refuse(
        [
            f"{row.snapshot.product_name} ({row.unavailable_reason or NOT_AT_A_WAREHOUSE}, "
            f"and no other merchant has {row.snapshot.quantity} in stock)"
            for row in rows
            if row.snapshot.line_id in sold_out
            and not any(
                line_id == row.snapshot.line_id
                and merchant_id != row.snapshot.merchant_id
                and (offer.stock is None or offer.stock >= row.snapshot.quantity)
                for (line_id, merchant_id), offer in offers.items()
            )
        ]
    )


def current_warehouses(
    rows: Sequence[R], nodes: CartNodes, sold_out: frozenset[int]
) -> tuple[dict[int, int], list[R]]:
    """The warehouse each version 2 line ships from now, and the lines no warehouse of their
    merchant can ship (short at every node, or none ships to the destination)."""
    warehouses: dict[int, int] = {}
    short: list[R] = []
    for row in rows:
        line = row.snapshot
        if line.line_id in sold_out or not nodes.is_v2(line.merchant_id):
            continue
        node = nodes.line_node(
            merchant_id=line.merchant_id,
            offer_id=line.offer_id,
            quantity=line.quantity,
            warehouse_id=line.warehouse_id,
        )
        if node is None:
            short.append(row)
        else:
            warehouses[line.line_id] = node.warehouse_id
    return warehouses, short
