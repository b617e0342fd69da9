"""Fulfillment reads: the nodes of version 2 merchants for a destination and the stock of
offers per node, in a fixed number of queries whatever the cart's size."""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Exists, OuterRef, QuerySet

from storefront.catalog.shipping import postal_prefix_candidates
from storefront.models import Offer, ParcelRate, Warehouse, WarehouseStock


@dataclass(frozen=True, slots=True)
class FulfillmentNode:
    """One warehouse of a merchant with its parcel rate for one destination (the contract's
    node ``shipping``): ``tiers`` are (up_to_g, fee) pairs with increasing ``up_to_g``."""

    warehouse_id: int
    name: str
    base_fee: int
    per_extra_unit: int
    tiers: tuple[tuple[int, int], ...]
    per_kg_over: int
    postal_prefix: str


def merchant_ids_with_warehouses(*, merchant_ids: Iterable[int]) -> set[int]:
    """The version 2 merchants among ``merchant_ids``: those with an active warehouse."""
    ids = set(merchant_ids)
    if not ids:
        return set()
    return set(
        Warehouse.objects.filter(merchant_id__in=ids, active=True)
        .values_list("merchant_id", flat=True)
        .distinct()
    )


def merchant_nodes_for_destination(
    *, merchant_ids: Iterable[int], postal_code: str | None
) -> dict[int, tuple[FulfillmentNode, ...]]:
    """``{merchant_id: nodes}`` for every version 2 merchant among ``merchant_ids``.

    A merchant left out has no active warehouse (version 1: priced by its shipping rule and
    ``Offer.stock``). A version 2 merchant's nodes are its active warehouses that ship to
    ``postal_code``: each with the rate of the longest matching ``postal_prefix`` (``""`` is
    everywhere); a warehouse with no matching rate is left out, so the tuple may be empty (the
    merchant cannot ship there). Nodes are in warehouse id order.

    Two queries whatever the number of merchants: the active warehouses, then the rates whose
    prefix can match the destination (an ``IN`` over at most 11 prefixes) joined to their tiers.
    """
    ids = set(merchant_ids)
    if not ids:
        return {}
    warehouses = list(
        Warehouse.objects.filter(merchant_id__in=ids, active=True)
        .order_by("pk")
        .values_list("pk", "merchant_id", "name")
    )
    if not warehouses:
        return {}
    rows = (
        ParcelRate.objects.filter(
            warehouse_id__in=[pk for pk, _, _ in warehouses],
            postal_prefix__in=postal_prefix_candidates(postal_code),
        )
        .order_by("warehouse_id", "postal_prefix", "tiers__up_to_g")
        .values_list(
            "pk",
            "warehouse_id",
            "postal_prefix",
            "base_fee",
            "per_extra_unit",
            "per_kg_over",
            "tiers__up_to_g",
            "tiers__fee",
        )
    )
    # The longest matching prefix of each warehouse: rows come shortest prefix first.
    chosen: dict[int, tuple[int, str, int, int, int]] = {}
    tiers: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for rate_id, warehouse_id, prefix, base, extra, per_kg, up_to_g, fee in rows:
        current = chosen.get(warehouse_id)
        if current is None or len(prefix) > len(current[1]):
            chosen[warehouse_id] = (rate_id, prefix, base, extra, per_kg)
        if up_to_g is not None:
            tiers[rate_id].append((up_to_g, fee))
    nodes: dict[int, list[FulfillmentNode]] = {merchant_id: [] for _, merchant_id, _ in warehouses}
    for warehouse_id, merchant_id, name in warehouses:
        rate = chosen.get(warehouse_id)
        if rate is None:
            continue
        rate_id, prefix, base, extra, per_kg = rate
        nodes[merchant_id].append(
            FulfillmentNode(
                warehouse_id=warehouse_id,
                name=name,
                base_fee=base,
                per_extra_unit=extra,
                tiers=tuple(tiers.get(rate_id, ())),
                per_kg_over=per_kg,
                postal_prefix=prefix,
            )
        )
    return {merchant_id: tuple(found) for merchant_id, found in nodes.items()}


def offer_stock_by_warehouse(*, offer_ids: Iterable[int]) -> dict[int, dict[int, int | None]]:
    """``{offer_id: {warehouse_id: stock}}`` at active warehouses (``None``: unlimited), in one
    query. An offer of a version 2 merchant with no entry is sold from no warehouse; offers of
    version 1 merchants have none either (their stock is ``Offer.stock``)."""
    ids = set(offer_ids)
    if not ids:
        return {}
    found: dict[int, dict[int, int | None]] = defaultdict(dict)
    for offer_id, warehouse_id, stock in (
        WarehouseStock.objects.filter(offer_id__in=ids, warehouse__active=True)
        .order_by("offer_id", "warehouse_id")
        .values_list("offer_id", "warehouse_id", "stock")
    ):
        found[offer_id][warehouse_id] = stock
    return dict(found)


def warehouse_list(*, merchant_id: int) -> QuerySet[Warehouse]:
    """A merchant's warehouses, active first, then by name."""
    return Warehouse.objects.filter(merchant_id=merchant_id).order_by("-active", "name")


def merchant_offers_without_stock_rows(*, merchant_id: int) -> QuerySet[Offer]:
    """A version 2 merchant's active offers sold from none of its active warehouses (for the
    admin: what a merchant still has to stock)."""
    stocked = WarehouseStock.objects.filter(offer=OuterRef("pk"), warehouse__active=True)
    return Offer.objects.filter(merchant_id=merchant_id, active=True).exclude(Exists(stocked))
