"""Writing a feed's fulfillment columns once its offers are written: stock per warehouse and
product weights.

Both compare before they write (a re-run writes nothing) and run after every batch of a run,
resumes included, so they are safe to repeat. Stock rows are written in chunks, each in one
transaction under its offers' row locks (the lock checkout takes), with ``Offer.stock`` kept
the total (``storefront.fulfillment.stock``) and the products told to ``offers_changed``.
"""

from collections import defaultdict
from dataclasses import dataclass, replace

import numpy as np
from django.db import transaction
from django.utils import timezone

from storefront.catalog.offer_changes import offers_changed_notify
from storefront.fulfillment.stock import offer_stock_totals_sync
from storefront.imports.plan import MerchantOffers
from storefront.imports.validate import UNLIMITED, ValidatedFeed
from storefront.imports.validate_fulfillment import NONE
from storefront.models import Offer, Product, WarehouseStock

CHUNK = 2000


@dataclass(frozen=True)
class FulfillmentCounts:
    stock_rows: int = 0
    weights: int = 0

    def summary(self) -> str:
        parts = []
        if self.stock_rows:
            parts.append(f"{self.stock_rows:,} warehouse stock rows written")
        if self.weights:
            parts.append(f"{self.weights:,} product weights set")
        return (" " + ", ".join(parts).capitalize() + ".") if parts else ""


def offers_feed(feed: ValidatedFeed, snapshot: MerchantOffers) -> ValidatedFeed:
    """The feed the offer writers see: only each SKU's first row writes an offer, and a row
    whose stock is at a warehouse leaves ``Offer.stock`` as it is (the total follows from the
    warehouse rows; a new offer starts at 0)."""
    at_warehouse = feed.warehouse_id != NONE
    if not at_warehouse.any():
        return feed
    at = snapshot.find(feed.sku)
    kept = np.where(at >= 0, snapshot.stock[np.maximum(at, 0)] if len(snapshot) else 0, 0)
    return replace(feed, stock=np.where(at_warehouse, kept, feed.stock))


def warehouse_stock_write(*, merchant_id: int, feed: ValidatedFeed) -> int:
    """Upserts the stock of every valid row naming a warehouse; returns the rows written."""
    rows = np.flatnonzero(feed.valid & (feed.warehouse_id != NONE))
    written = 0
    for start in range(0, rows.size, CHUNK):
        written += _stock_chunk(merchant_id, feed, rows[start : start + CHUNK])
    return written


@transaction.atomic
def _stock_chunk(merchant_id: int, feed: ValidatedFeed, rows: np.ndarray) -> int:
    skus = [str(sku) for sku in feed.sku[rows]]
    offers = {
        sku: (pk, product_id)
        for sku, pk, product_id in Offer.objects.select_for_update(of=("self",))
        .filter(merchant_id=merchant_id, merchant_sku__in=set(skus))
        .order_by("pk")
        .values_list("merchant_sku", "pk", "product_id")
    }
    existing = {
        (offer_id, warehouse_id): stock
        for offer_id, warehouse_id, stock in WarehouseStock.objects.filter(
            offer_id__in=[pk for pk, _ in offers.values()]
        ).values_list("offer_id", "warehouse_id", "stock")
    }
    now = timezone.now()
    changed: list[WarehouseStock] = []
    products: set[int] = set()
    for sku, warehouse_id, stock in zip(
        skus, feed.warehouse_id[rows].tolist(), feed.stock[rows].tolist(), strict=True
    ):
        if sku not in offers:  # its offer row failed to write: nothing to stock
            continue
        offer_id, product_id = offers[sku]
        value = None if stock == UNLIMITED else int(stock)
        key = (offer_id, int(warehouse_id))
        if key in existing and existing[key] == value:
            continue
        changed.append(
            WarehouseStock(offer_id=offer_id, warehouse_id=key[1], stock=value, updated_at=now)
        )
        products.add(product_id)
    if not changed:
        return 0
    WarehouseStock.objects.bulk_create(
        changed,
        update_conflicts=True,
        unique_fields=["offer", "warehouse"],
        update_fields=["stock", "updated_at"],
    )
    offer_stock_totals_sync(offer_ids={row.offer_id for row in changed})
    offers_changed_notify(product_ids=products)
    return len(changed)


def product_weights_write(*, feed: ValidatedFeed) -> int:
    """Sets the weight of every product a valid row gives one (validation left one weight
    per product); returns the products changed."""
    rows = np.flatnonzero(feed.valid & (feed.weight != NONE))
    wanted = dict(zip(feed.product_id[rows].tolist(), feed.weight[rows].tolist(), strict=True))
    changed = 0
    ids = sorted(wanted)
    for start in range(0, len(ids), CHUNK):
        part = ids[start : start + CHUNK]
        stored = dict(Product.objects.filter(pk__in=part).values_list("pk", "weight_g"))
        by_weight: dict[int, list[int]] = defaultdict(list)
        for pk in part:
            if pk in stored and stored[pk] != wanted[pk]:
                by_weight[int(wanted[pk])].append(pk)
        if not by_weight:
            continue
        with transaction.atomic():
            now = timezone.now()
            for weight, pks in by_weight.items():
                Product.objects.filter(pk__in=pks).update(weight_g=weight, updated_at=now)
            moved = [pk for pks in by_weight.values() for pk in pks]
            # A weight changes what carts cost: the price watch and the pages hear of it.
            offers_changed_notify(product_ids=moved)
        changed += len(moved)
    return changed
