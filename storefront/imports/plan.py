"""What a validated feed will change, decided in NumPy against a snapshot of the merchant's
offers taken once per run.

- a row whose SKU is new is created; one whose price, stock or active differ is updated; the
  rest are unchanged and never reach the database (a re-run writes nothing);
- an active row supersedes the merchant's other active offer for the same product (a SKU the
  merchant replaced): that offer is deactivated in the row's batch, before the upsert, so
  "one active offer per product and merchant" holds at every statement.

The database statements still compare before they write (``IS DISTINCT FROM``), so an offer
that changed after the snapshot is handled right; one that would now break the one-active-offer
rule makes its batch fail cleanly, and a resume takes a fresh snapshot.
"""

from dataclasses import dataclass

import numpy as np
from django.db import connection

from storefront.models import Offer

_NO_STOCK = -1


@dataclass(frozen=True)
class MerchantOffers:
    """The merchant's offers, sorted by SKU (for vectorised lookups)."""

    sku: np.ndarray
    id: np.ndarray
    product_id: np.ndarray
    price: np.ndarray
    stock: np.ndarray  # -1: unlimited
    active: np.ndarray

    def __len__(self) -> int:
        return int(self.id.size)

    def find(self, skus: np.ndarray) -> np.ndarray:
        """Index of each SKU in this snapshot, -1 where the merchant has no such SKU."""
        if len(self) == 0 or skus.size == 0:
            return np.full(skus.size, -1, dtype=np.int64)
        at = np.searchsorted(self.sku, skus)
        at = np.minimum(at, len(self) - 1)
        return np.where(self.sku[at] == skus, at, -1)


def merchant_offers_load(*, merchant_id: int) -> MerchantOffers:
    table = connection.ops.quote_name(Offer._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT merchant_sku, id, product_id, unit_price, stock, active FROM {table} "
            "WHERE merchant_id = %s",
            [merchant_id],
        )
        rows = cursor.fetchall()
    skus = np.array([row[0] for row in rows], dtype=np.str_) if rows else np.empty(0, "<U1")
    order = np.argsort(skus, kind="stable")
    numbers = np.array(
        [(row[1], row[2], row[3], _NO_STOCK if row[4] is None else row[4], row[5]) for row in rows],
        dtype=np.int64,
    ).reshape(-1, 5)[order]
    return MerchantOffers(
        sku=skus[order],
        id=numbers[:, 0],
        product_id=numbers[:, 1],
        price=numbers[:, 2],
        stock=numbers[:, 3],
        active=numbers[:, 4].astype(bool),
    )


@dataclass(frozen=True)
class WritePlan:
    """Per feed row: ``write`` (create or update), ``existing_id`` (the offer it updates, -1
    for a new SKU) and ``supersedes`` (the offer id it deactivates, -1 for none)."""

    write: np.ndarray
    existing_id: np.ndarray
    supersedes: np.ndarray

    def batch(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows to write and offer ids to deactivate in batch [lo, hi)."""
        rows = lo + np.flatnonzero(self.write[lo:hi])
        replaced = self.supersedes[lo:hi]
        return rows, replaced[replaced >= 0]


def offers_plan(
    *,
    snapshot: MerchantOffers,
    valid: np.ndarray,
    sku: np.ndarray,
    product_id: np.ndarray,
    price: np.ndarray,
    stock: np.ndarray,
    active: np.ndarray,
) -> WritePlan:
    at = snapshot.find(sku)
    known = at >= 0
    safe = np.maximum(at, 0)
    differs = (
        (snapshot.price[safe] != price)
        | (snapshot.stock[safe] != stock)
        | (snapshot.active[safe] != active)
    ) if len(snapshot) else np.ones(sku.size, dtype=bool)  # fmt: skip
    write = valid & (~known | differs)
    existing_id = np.where(known, snapshot.id[safe] if len(snapshot) else -1, -1)
    return WritePlan(
        write=write,
        existing_id=existing_id,
        supersedes=_superseded(snapshot, valid & active, sku, product_id),
    )


def _superseded(snapshot: MerchantOffers, rows: np.ndarray, sku, product_id) -> np.ndarray:
    """For each active row, the merchant's active offer of that product under another SKU."""
    supersedes = np.full(sku.size, -1, dtype=np.int64)
    live = np.flatnonzero(snapshot.active)
    if live.size == 0 or not rows.any():
        return supersedes
    # At most one active offer per product and merchant: products are unique keys here.
    by_product = live[np.argsort(snapshot.product_id[live], kind="stable")]
    products = snapshot.product_id[by_product]
    candidates = np.flatnonzero(rows)
    at = np.minimum(np.searchsorted(products, product_id[candidates]), products.size - 1)
    hit = by_product[at]
    replaced = (products[at] == product_id[candidates]) & (snapshot.sku[hit] != sku[candidates])
    supersedes[candidates[replaced]] = snapshot.id[hit[replaced]]
    return supersedes
