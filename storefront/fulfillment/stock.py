"""Stock per warehouse, and ``Offer.stock`` kept the total of a version 2 merchant's offers.

``Offer.stock`` of an offer whose merchant has an active warehouse is the sum of its stock at
its merchant's active warehouses, or ``None`` (unlimited) when any of them is unlimited, so
every reader of ``Offer.stock`` ("Only 3 left", "in stock" filters, the stored cheapest
offer) stays right. Offers of merchants with no active warehouse keep the ``Offer.stock``
they had: version 1 stock, written by the catalog services.

Stock moves under the offer's row lock (``select_for_update``), the lock checkout takes too, so
a merchant's edit and a shopper's order never lose each other's change.
"""

from collections.abc import Iterable, Mapping

from django.db import transaction
from django.db.models import (
    Case,
    Count,
    Exists,
    F,
    IntegerField,
    OuterRef,
    Q,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Cast
from django.utils import timezone

from storefront.catalog.cheapest import (
    catalog_cheapest_mark_stale,
    catalog_cheapest_recompute_request,
)
from storefront.catalog.offer_changes import offers_changed_notify
from storefront.errors import Conflict, ValidationFailed
from storefront.fulfillment.validation import full_clean_or_fail
from storefront.models import Offer, Warehouse, WarehouseStock


def offer_stock_totals(*, offer_ids: Iterable[int]) -> dict[int, int | None]:
    """What ``Offer.stock`` must be for each offer of a version 2 merchant among ``offer_ids``
    (offers of version 1 merchants are left out), in one query."""
    ids = set(offer_ids)
    if not ids:
        return {}
    at_active = Q(warehouse_stock__warehouse__active=True)
    rows = (
        Offer.objects.filter(pk__in=ids)
        .filter(Exists(Warehouse.objects.filter(merchant_id=OuterRef("merchant_id"), active=True)))
        .annotate(
            _total=Sum("warehouse_stock__stock", filter=at_active),
            _unlimited=Count(
                "warehouse_stock", filter=at_active & Q(warehouse_stock__stock__isnull=True)
            ),
        )
        .values_list("pk", "_total", "_unlimited")
    )
    return {pk: None if unlimited else int(total or 0) for pk, total, unlimited in rows}


def offer_stock_totals_sync(*, offer_ids: Iterable[int]) -> int:
    """Writes the totals of ``offer_stock_totals`` where ``Offer.stock`` differs, in one
    UPDATE, and tells the cheapest offer, the page cache and the price watch. Returns the
    offers changed. The caller holds a transaction (and, racing checkout, the offers' locks)."""
    totals = offer_stock_totals(offer_ids=offer_ids)
    if not totals:
        return 0
    current = dict(Offer.objects.filter(pk__in=totals).values_list("pk", "stock"))
    changed = {pk: total for pk, total in totals.items() if current.get(pk, total) != total}
    if not changed:
        return 0
    Offer.objects.filter(pk__in=changed).update(
        stock=Case(
            *(
                # Cast: PostgreSQL reads a CASE of untyped parameters (NULL ones too) as text.
                When(pk=pk, then=Cast(Value(total), IntegerField()))
                for pk, total in changed.items()
            ),
            output_field=IntegerField(),
        ),
        updated_at=timezone.now(),
    )
    product_ids = list(
        Offer.objects.filter(pk__in=changed).values_list("product_id", flat=True).distinct()
    )
    if catalog_cheapest_mark_stale(product_ids=product_ids):
        catalog_cheapest_recompute_request()
    offers_changed_notify(product_ids=product_ids)
    return len(changed)


def _offer_locked(offer: Offer) -> Offer:
    return Offer.objects.select_for_update(of=("self",)).select_related("merchant").get(pk=offer.pk)


@transaction.atomic
def warehouse_stock_set(*, offer: Offer, warehouse: Warehouse, stock: int | None) -> WarehouseStock:
    """Sets an offer's stock at a warehouse of its merchant (``None``: unlimited), creating the
    row (the offer is then sold from there), and ``Offer.stock`` to the new total."""
    locked = _offer_locked(offer)
    if warehouse.merchant_id != locked.merchant_id:
        raise ValidationFailed(
            f"Warehouse {warehouse.name} belongs to another merchant than this offer.",
            code="warehouse_other_merchant",
            field="warehouse",
        )
    row = (
        WarehouseStock.objects.select_for_update().filter(offer=locked, warehouse=warehouse).first()
    )
    if row is None:
        row = WarehouseStock(offer=locked, warehouse=warehouse)
    row.stock = stock
    full_clean_or_fail(row)
    row.save()
    _stock_changed(locked)
    offer.stock = Offer.objects.values_list("stock", flat=True).get(pk=offer.pk)
    return row


@transaction.atomic
def warehouse_stock_remove(*, offer: Offer, warehouse: Warehouse) -> bool:
    """Stops selling an offer from a warehouse (its row goes); ``Offer.stock`` follows.
    Returns whether there was a row."""
    locked = _offer_locked(offer)
    deleted, _ = WarehouseStock.objects.filter(offer=locked, warehouse=warehouse).delete()
    if deleted:
        _stock_changed(locked)
        offer.stock = Offer.objects.values_list("stock", flat=True).get(pk=offer.pk)
    return bool(deleted)


def _stock_changed(offer: Offer) -> None:
    # The stock at a node changes what a cart can cost even when the total stays the same.
    offer_stock_totals_sync(offer_ids=[offer.pk])
    offers_changed_notify(product_ids=[offer.product_id])


def warehouse_stock_move(*, moves: Mapping[tuple[int, int], int]) -> None:
    """Adds ``moves[(offer_id, warehouse_id)]`` (negative: takes) to finite stock at
    warehouses, and the same to the offers' totals: checkout's ``stock_move`` for lines sold
    from a warehouse (use it instead of ``stock_move`` for them, not besides it).

    The caller holds the offers' row locks (``storefront.checkout.stock.offers_lock``) in its
    transaction. A row that is missing or would go below 0 raises ``Conflict`` and moves
    nothing; unlimited rows do not move.
    """
    moves = {key: delta for key, delta in moves.items() if delta != 0}
    if not moves:
        return
    rows = {
        (row.offer_id, row.warehouse_id): row
        for row in WarehouseStock.objects.select_for_update().filter(
            offer_id__in={offer_id for offer_id, _ in moves},
            warehouse_id__in={warehouse_id for _, warehouse_id in moves},
        )
    }
    finite: dict[int, int] = {}
    for key, delta in moves.items():
        row = rows.get(key)
        if row is None:
            raise Conflict(
                f"Offer {key[0]} is not sold from warehouse {key[1]}.", code="not_at_warehouse"
            )
        if row.stock is None:
            continue
        if row.stock + delta < 0:
            raise Conflict(
                f"Only {row.stock} left of offer {key[0]} at warehouse {key[1]}.",
                code="out_of_stock",
            )
        finite[row.pk] = delta
    if not finite:
        return
    WarehouseStock.objects.filter(pk__in=finite).update(
        stock=F("stock") + Case(*(When(pk=pk, then=Value(delta)) for pk, delta in finite.items())),
        updated_at=timezone.now(),
    )
    offer_stock_totals_sync(offer_ids={offer_id for offer_id, _ in moves})
