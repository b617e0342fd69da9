"""Stock moves of checkout: taken when an order is placed, given back when a package is
cancelled or an order fails. Stock moves only under the offers' row locks (taken in id
order by every caller, so never a deadlock), so two shoppers racing for the last unit get one
order and one ``Conflict``, never negative stock.

A line shipped from a warehouse (a version 2 merchant) moves the stock of that warehouse and
the offer's total with it (``storefront.fulfillment.stock.warehouse_stock_move``), under the
same offer locks."""

from django.db.models import Case, F, Value, When
from django.utils import timezone

from storefront.caching.versions import cache_versions_bump_on_commit
from storefront.catalog.cheapest import (
    catalog_cheapest_mark_stale,
    catalog_cheapest_recompute_request,
)
from storefront.fulfillment.stock import warehouse_stock_move
from storefront.models import Offer, OrderLine, WarehouseStock


def offers_lock(offer_ids) -> dict[int, Offer]:
    """Row locks in id order: every checkout takes them in the same order (no deadlock)."""
    offers = Offer.objects.select_for_update(of=("self",)).filter(pk__in=set(offer_ids))
    return {offer.pk: offer for offer in offers.order_by("pk")}


def stock_move(moves: dict[int, int], offers: dict[int, Offer]) -> None:
    """Adds ``moves[offer_id]`` (negative: takes) to each locked offer's finite stock and
    marks the products whose buyability may have flipped for a cheapest-offer refresh."""
    moves = {
        offer_id: delta
        for offer_id, delta in moves.items()
        if offer_id in offers and offers[offer_id].stock is not None and delta != 0
    }
    if not moves:
        return
    # One statement for every offer of the order.
    Offer.objects.filter(pk__in=moves).update(
        stock=F("stock") + Case(*(When(pk=pk, then=Value(delta)) for pk, delta in moves.items())),
        updated_at=timezone.now(),
    )
    # Product pages show the stock itself: theirs are re-rendered after the commit.
    cache_versions_bump_on_commit(product_ids=[offers[pk].product_id for pk in moves])
    stale = [
        offers[pk].product_id
        for pk, delta in moves.items()
        if offers[pk].stock in (0, -delta)  # sold out before, or now
    ]
    if stale and catalog_cheapest_mark_stale(product_ids=stale):
        catalog_cheapest_recompute_request()


def _stock_moves(
    moves: dict[int, int], at_warehouses: dict[tuple[int, int], int], offers: dict[int, Offer]
) -> None:
    stock_move(moves, offers)
    if at_warehouses:
        warehouse_stock_move(moves=at_warehouses)
        cache_versions_bump_on_commit(
            product_ids=[offers[pk].product_id for pk, _ in at_warehouses if pk in offers]
        )


def stock_take(*, summary, offers: dict[int, Offer]) -> None:
    """Takes the stock of the summary's lines: from the warehouse each ships from, else
    from the offer. ``Conflict`` when a warehouse no longer has it (nothing moves)."""
    moves: dict[int, int] = {}
    at_warehouses: dict[tuple[int, int], int] = {}
    for group in summary.groups:
        for line in group.lines:
            if line.warehouse_id is None:
                moves[line.offer_id] = moves.get(line.offer_id, 0) - line.quantity
            else:
                key = (line.offer_id, line.warehouse_id)
                at_warehouses[key] = at_warehouses.get(key, 0) - line.quantity
    _stock_moves(moves, at_warehouses, offers)


def stock_release(*, packages) -> None:
    """Gives back the stock of the packages' lines, to the warehouse each was taken from
    (offers deleted since: nothing to give; a warehouse deleted since, or no longer selling
    the offer: nothing to give there)."""
    moves: dict[int, int] = {}
    at_warehouses: dict[tuple[int, int], int] = {}
    lines = OrderLine.objects.filter(merchant_order__in=packages, offer__isnull=False)
    for offer_id, warehouse_id, quantity in lines.values_list(
        "offer_id", "warehouse_id", "quantity"
    ):
        if warehouse_id is None:
            moves[offer_id] = moves.get(offer_id, 0) + quantity
        else:
            at_warehouses[(offer_id, warehouse_id)] = (
                at_warehouses.get((offer_id, warehouse_id), 0) + quantity
            )
    offers = offers_lock({*moves, *(offer_id for offer_id, _ in at_warehouses)})
    _stock_moves(moves, _still_stocked(at_warehouses), offers)


def _still_stocked(moves: dict[tuple[int, int], int]) -> dict[tuple[int, int], int]:
    """The moves whose warehouse still sells the offer (a stock row): giving back to a row
    the merchant removed would refuse the whole release."""
    if not moves:
        return {}
    rows = set(
        WarehouseStock.objects.filter(
            offer_id__in={offer_id for offer_id, _ in moves},
            warehouse_id__in={warehouse_id for _, warehouse_id in moves},
        ).values_list("offer_id", "warehouse_id")
    )
    return {key: delta for key, delta in moves.items() if key in rows}
