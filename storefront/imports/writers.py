"""Writing a validated feed's offers, one batch per call, inside the caller's transaction.

Per batch, in this order (the order keeps "one active offer per product and merchant" true at
every statement):

1. supersede: for each active row, the merchant's other active offer for that product (a SKU
   the feed replaced) is deactivated;
2. upsert by (merchant, SKU): new SKUs are inserted; existing ones are updated only where
   price, stock or active differ, so a re-run changes no row and no ``updated_at``;
3. every product whose offers changed gets a pending cheapest-offer refresh.

PostgreSQL copies the valid rows once into a temporary staging table and runs each batch as
two set-based statements (``INSERT ... ON CONFLICT DO UPDATE ... WHERE changed``); other
databases (SQLite in the embedded setup and in tests) go through the ORM with the same rules.
"""

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from django.db import connection
from django.utils import timezone

from storefront.cheapest import catalog_cheapest_mark_stale
from storefront.imports.validate import UNLIMITED, ValidatedFeed
from storefront.models import CheapestOfferRefresh, Offer, Product

STAGE_TABLE = "offer_feed_stage"


@dataclass(frozen=True)
class BatchCounts:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    superseded: int = 0


def _batch_rows(feed: ValidatedFeed, lo: int, hi: int) -> np.ndarray:
    return lo + np.flatnonzero(feed.valid[lo:hi])


class PostgresOfferWriter:
    def __init__(self, *, merchant_id: int, feed: ValidatedFeed) -> None:
        self.merchant_id = merchant_id
        self.feed = feed
        quote = connection.ops.quote_name
        self.offer = quote(Offer._meta.db_table)
        self.refresh = quote(CheapestOfferRefresh._meta.db_table)

    def prepare(self) -> None:
        """Copies every valid row into a session-private table, in one COPY."""
        rows = np.flatnonzero(self.feed.valid)
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE IF EXISTS pg_temp.{STAGE_TABLE}")
            cursor.execute(
                f"CREATE TEMPORARY TABLE {STAGE_TABLE} (seq integer NOT NULL, "
                "product_id bigint NOT NULL, sku varchar(64) NOT NULL, price bigint NOT NULL, "
                "stock integer, active boolean NOT NULL)"
            )
            columns = "seq, product_id, sku, price, stock, active"
            with cursor.copy(f"COPY {STAGE_TABLE} ({columns}) FROM STDIN") as copy:
                for row in zip(
                    rows.tolist(),
                    self.feed.product_id[rows].tolist(),
                    self.feed.sku[rows].tolist(),
                    self.feed.price[rows].tolist(),
                    np.where(
                        self.feed.stock[rows] == UNLIMITED, None, self.feed.stock[rows]
                    ).tolist(),
                    self.feed.active[rows].tolist(),
                    strict=True,
                ):
                    copy.write_row(row)
            cursor.execute(f"CREATE INDEX ON {STAGE_TABLE} (seq)")
            cursor.execute(f"ANALYZE {STAGE_TABLE}")

    def write_batch(self, lo: int, hi: int) -> BatchCounts:
        staged = int(self.feed.valid[lo:hi].sum())
        if staged == 0:
            return BatchCounts()
        now = timezone.now()
        batch = {"merchant": self.merchant_id, "lo": lo, "hi": hi, "now": now}
        with connection.cursor() as cursor:
            cursor.execute(
                f"""
                WITH replaced AS (
                    UPDATE {self.offer} AS o SET active = false, updated_at = %(now)s
                    FROM {STAGE_TABLE} AS s
                    WHERE s.seq >= %(lo)s AND s.seq < %(hi)s AND s.active
                      AND o.merchant_id = %(merchant)s AND o.product_id = s.product_id
                      AND o.active AND o.merchant_sku <> s.sku
                    RETURNING o.product_id
                ), marked AS (
                    INSERT INTO {self.refresh} (product_id) SELECT product_id FROM replaced
                )
                SELECT count(*) FROM replaced
                """,
                batch,
            )
            (superseded,) = cursor.fetchone()
            cursor.execute(
                f"""
                WITH written AS (
                    INSERT INTO {self.offer} AS o (product_id, merchant_id, merchant_sku,
                        unit_price, stock, active, created_at, updated_at)
                    SELECT product_id, %(merchant)s, sku, price, stock, active, %(now)s, %(now)s
                    FROM {STAGE_TABLE} WHERE seq >= %(lo)s AND seq < %(hi)s ORDER BY seq
                    ON CONFLICT (merchant_id, merchant_sku) DO UPDATE
                    SET unit_price = excluded.unit_price, stock = excluded.stock,
                        active = excluded.active, updated_at = excluded.updated_at
                    WHERE o.product_id = excluded.product_id
                      AND (o.unit_price, o.stock, o.active)
                          IS DISTINCT FROM (excluded.unit_price, excluded.stock, excluded.active)
                    RETURNING (o.xmax = 0) AS inserted, o.product_id
                ), marked AS (
                    INSERT INTO {self.refresh} (product_id) SELECT product_id FROM written
                )
                SELECT count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted)
                FROM written
                """,
                batch,
            )
            created, updated = cursor.fetchone()
        return BatchCounts(
            created=created,
            updated=updated,
            unchanged=staged - created - updated,
            superseded=superseded,
        )

    def close(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE IF EXISTS pg_temp.{STAGE_TABLE}")


@dataclass
class _Current:
    id: int
    product_id: int
    price: int
    stock: int | None
    active: bool


class OrmOfferWriter:
    """The same rules through the ORM, for SQLite and any other database."""

    def __init__(self, *, merchant_id: int, feed: ValidatedFeed) -> None:
        self.merchant_id = merchant_id
        self.feed = feed
        self.current: dict[str, _Current] = {}
        self.active_sku: dict[int, str] = {}

    def prepare(self) -> None:
        offers = Offer.objects.filter(merchant_id=self.merchant_id).values_list(
            "merchant_sku", "id", "product_id", "unit_price", "stock", "active"
        )
        for sku, *values in offers:
            self.current[sku] = _Current(*values)
            if self.current[sku].active:
                self.active_sku[self.current[sku].product_id] = sku

    def write_batch(self, lo: int, hi: int) -> BatchCounts:
        rows = _batch_rows(self.feed, lo, hi)
        now = timezone.now()
        superseded = self._supersede(rows, now)
        created, updated, changed_products = [], [], [offer.product_id for offer in superseded]
        for row in rows.tolist():
            offer = self._offer(row, now)
            current = self.current.get(offer.merchant_sku)
            if current is None:
                created.append(offer)
            elif (current.price, current.stock, current.active) != (
                offer.unit_price,
                offer.stock,
                offer.active,
            ):
                offer.pk = current.id
                updated.append(offer)
            else:
                continue
            changed_products.append(offer.product_id)
            self._remember(offer)
        Offer.objects.bulk_create(created, batch_size=500)
        Offer.objects.bulk_update(
            updated, ["unit_price", "stock", "active", "updated_at"], batch_size=500
        )
        catalog_cheapest_mark_stale(product_ids=changed_products)
        return BatchCounts(
            created=len(created),
            updated=len(updated),
            unchanged=rows.size - len(created) - len(updated),
            superseded=len(superseded),
        )

    def close(self) -> None:
        self.current.clear()
        self.active_sku.clear()

    def _offer(self, row: int, now) -> Offer:
        stock = int(self.feed.stock[row])
        return Offer(
            product_id=int(self.feed.product_id[row]),
            merchant_id=self.merchant_id,
            merchant_sku=self.feed.sku[row],
            unit_price=int(self.feed.price[row]),
            stock=None if stock == UNLIMITED else stock,
            active=bool(self.feed.active[row]),
            created_at=now,
            updated_at=now,
        )

    def _supersede(self, rows: np.ndarray, now) -> list[_Current]:
        replaced = []
        for row in rows[self.feed.active[rows]].tolist():
            product_id, sku = int(self.feed.product_id[row]), self.feed.sku[row]
            other = self.active_sku.get(product_id)
            if other is not None and other != sku:
                replaced.append(self.current[other])
                self.current[other].active = False
                del self.active_sku[product_id]
        if replaced:
            Offer.objects.filter(pk__in=[offer.id for offer in replaced]).update(
                active=False, updated_at=now
            )
        return replaced

    def _remember(self, offer: Offer) -> None:
        current = self.current.get(offer.merchant_sku)
        if current is not None and current.active and not offer.active:
            self.active_sku.pop(current.product_id, None)
        self.current[offer.merchant_sku] = _Current(
            offer.pk or 0, offer.product_id, offer.unit_price, offer.stock, offer.active
        )
        if offer.active:
            self.active_sku[offer.product_id] = offer.merchant_sku


def offer_writer_for(*, merchant_id: int, feed: ValidatedFeed):
    writer = PostgresOfferWriter if connection.vendor == "postgresql" else OrmOfferWriter
    return writer(merchant_id=merchant_id, feed=feed)


def merchant_skus(*, merchant_id: int) -> Mapping[str, int]:
    """The merchant's SKUs and their products (for the check that a SKU never moves)."""
    return dict(
        Offer.objects.filter(merchant_id=merchant_id).values_list("merchant_sku", "product_id")
    )


def product_gtins(product_ids: list[int]) -> Mapping[int, str]:
    return dict(Product.objects.filter(pk__in=product_ids).values_list("id", "gtin"))
