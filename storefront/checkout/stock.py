"""Stock moves of checkout: taken when an order is placed, given back when a package is
cancelled or an order fails. Stock moves only under the offers' row locks (taken in id
order by every caller, so never a deadlock), so two shoppers racing for the last unit get one
order and one ``Conflict``, never negative stock."""

from django.db.models import Case, F, Value, When
from django.utils import timezone

from storefront.caching.versions import cache_versions_bump_on_commit
from storefront.catalog.cheapest import (
    catalog_cheapest_mark_stale,
    catalog_cheapest_recompute_request,
)
from storefront.models import Offer, OrderLine


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


def stock_take(*, summary, offers: dict[int, Offer]) -> None:
    moves: dict[int, int] = {}
    for group in summary.groups:
        for line in group.lines:
            moves[line.offer_id] = moves.get(line.offer_id, 0) - line.quantity
    stock_move(moves, offers)


def stock_release(*, packages) -> None:
    """Gives back the stock of the packages' lines (offers deleted since: nothing to give)."""
    moves: dict[int, int] = {}
    for line in OrderLine.objects.filter(merchant_order__in=packages, offer__isnull=False):
        if line.offer_id is not None:
            moves[line.offer_id] = moves.get(line.offer_id, 0) + line.quantity
    stock_move(moves, offers_lock(moves))
