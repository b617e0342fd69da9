"""What one cart line of an offer can have: a merchant with warehouses ships a line whole from
one of them, so an offer's buyable quantity is the most one warehouse that ships to the
destination holds, never the offer's stock (the sum over its warehouses). The rule is the
cart's (``storefront.carts.fulfillment``); these reads serve the catalog, before any cart."""

from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Exists, OuterRef, Q

from storefront.catalog.shipping import postal_prefix_candidates
from storefront.fulfillment.selectors import (
    merchant_nodes_for_destination,
    offer_stock_by_warehouse,
)
from storefront.models import Offer, ParcelRate, Warehouse, WarehouseStock
from storefront.models.catalog import most_at_one


@dataclass(frozen=True, slots=True)
class OfferWarehouse:
    """One active warehouse that holds the offer. ``ships``: whether it ships to the
    destination asked about (``None``: none was named)."""

    warehouse_id: int
    name: str
    stock: int | None
    ships: bool | None


@dataclass(frozen=True, slots=True)
class OfferStock:
    """What one line of the offer can have (``max_quantity``, ``None``: unlimited) and, for a
    merchant with warehouses, those that hold it (``None`` for a merchant without)."""

    max_quantity: int | None
    warehouses: tuple[OfferWarehouse, ...] | None


def offers_line_stock(*, offers: Sequence[Offer], postal_code: str | None) -> dict[int, OfferStock]:
    """``{offer_id: OfferStock}`` for ``offers`` (their ``merchant_id`` read). An offer of a
    merchant without an active warehouse has its own stock. For a merchant with warehouses,
    ``max_quantity`` is the most one active warehouse holds: with ``postal_code``, only one
    with a parcel rate for it (as the cart prices), without, any (the destination unknown).

    One query when no merchant among them ships from warehouses; else two, and two more
    with ``postal_code`` (its rates)."""
    merchant_ids = {offer.merchant_id for offer in offers}
    names: dict[int, str] = {}
    v2: set[int] = set()
    if merchant_ids:
        for warehouse_id, merchant_id, name in Warehouse.objects.filter(
            merchant_id__in=merchant_ids, active=True
        ).values_list("pk", "merchant_id", "name"):
            names[warehouse_id] = name
            v2.add(merchant_id)
    stock = offer_stock_by_warehouse(
        offer_ids=[offer.pk for offer in offers if offer.merchant_id in v2]
    )
    shipping: set[int] | None = None
    if postal_code is not None and v2:
        nodes = merchant_nodes_for_destination(merchant_ids=v2, postal_code=postal_code)
        shipping = {node.warehouse_id for found in nodes.values() for node in found}
    found: dict[int, OfferStock] = {}
    for offer in offers:
        if offer.merchant_id not in v2:
            found[offer.pk] = OfferStock(max_quantity=offer.stock, warehouses=None)
            continue
        held = tuple(
            OfferWarehouse(
                warehouse_id=warehouse_id,
                name=names[warehouse_id],
                stock=units,
                ships=None if shipping is None else warehouse_id in shipping,
            )
            for warehouse_id, units in stock.get(offer.pk, {}).items()
        )
        found[offer.pk] = OfferStock(max_quantity=_most(held), warehouses=held)
    return found


def _most(held: Sequence[OfferWarehouse]) -> int | None:
    """The most one warehouse that ships can send (``None``: one holds unlimited stock)."""
    return most_at_one(warehouse.stock for warehouse in held if warehouse.ships is not False)


def offer_line_covers_q(*, quantity: int, postal_code: str | None = None) -> Q:
    """Offers one cart line of ``quantity`` can come from (a filter on offers, no query of
    its own): the offer's stock covers it for a merchant without warehouses; for a merchant
    with them, the stock at one active warehouse does, one with a rate for ``postal_code``
    when it is given (``offers_line_stock``'s rule)."""
    covers = Q(stock__isnull=True) | Q(stock__gte=quantity)
    at_one = WarehouseStock.objects.filter(
        Q(stock__isnull=True) | Q(stock__gte=quantity),
        offer=OuterRef("pk"),
        warehouse__active=True,
    )
    if postal_code is not None:
        rates = ParcelRate.objects.filter(
            warehouse_id=OuterRef("warehouse_id"),
            postal_prefix__in=postal_prefix_candidates(postal_code),
        )
        at_one = at_one.filter(Exists(rates))
    from_warehouses = Exists(
        Warehouse.objects.filter(merchant_id=OuterRef("merchant_id"), active=True)
    )
    return (~Q(from_warehouses) & covers) | (Q(from_warehouses) & Q(Exists(at_one)))
