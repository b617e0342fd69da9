"""Writing a validated feed's offers, one batch per call, inside the caller's transaction.

Per batch, in this order (the order keeps "one active offer per product and merchant" true at
every statement):

1. supersede: for each active row, the merchant's other active offer for that product (a SKU
   the feed replaced) is deactivated;
2. upsert by (merchant, SKU): new SKUs are inserted; existing ones are updated only where
   price, stock or active differ, so a re-run changes no row and no ``updated_at``;
3. every product whose offers changed gets a pending cheapest-offer refresh.

PostgreSQL copies each batch's rows into a temporary staging table and writes them with
two set-based statements (``INSERT ... ON CONFLICT DO UPDATE ... WHERE changed``); other
databases (SQLite in the embedded setup and in tests) go through the ORM with the same rules.
Only rows the plan (``storefront.imports.plan``) says are new or changed are staged.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.db import connection
from django.utils import timezone

from storefront.catalog.cheapest import catalog_cheapest_mark_stale
from storefront.imports.plan import WritePlan
from storefront.imports.validate import UNLIMITED, ValidatedFeed
from storefront.models import CheapestOfferRefresh, Offer, Product

STAGE_TABLE = "offer_feed_stage"


@dataclass(frozen=True)
class BatchCounts:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    superseded: int = 0
    # Products whose offers this batch changed (for ``offers_changed``).
    product_ids: tuple[int, ...] = ()


def _copy_text(feed: ValidatedFeed, rows: np.ndarray) -> bytes:
    """COPY text format for the rows, built column-wise by NumPy. Validation has refused
    control characters in SKUs, so a backslash is the only character to escape."""
    if rows.size == 0:
        return b""
    stock = feed.stock[rows]
    columns = [
        feed.product_id[rows].astype(np.str_),
        np.strings.replace(feed.sku[rows], "\\", "\\\\"),
        feed.price[rows].astype(np.str_),
        np.where(stock == UNLIMITED, "\\N", stock.astype(np.str_)),
        np.where(feed.active[rows], "t", "f"),
    ]
    lines = columns[0]
    for column in columns[1:]:
        lines = np.strings.add(np.strings.add(lines, "\t"), column)
    return ("\n".join(lines.tolist()) + "\n").encode("utf-8")


class PostgresOfferWriter:
    """Each batch is copied into a session-private table and written by two set-based
    statements. Stateless between batches, so batches may run on several connections."""

    def __init__(self, *, merchant_id: int, feed: ValidatedFeed, plan: WritePlan) -> None:
        self.merchant_id = merchant_id
        self.feed = feed
        self.plan = plan
        quote = connection.ops.quote_name
        self.offer = quote(Offer._meta.db_table)
        self.refresh = quote(CheapestOfferRefresh._meta.db_table)

    def _stage(self, cursor, rows: np.ndarray) -> None:
        cursor.execute(
            f"CREATE TEMPORARY TABLE IF NOT EXISTS {STAGE_TABLE} (product_id bigint NOT NULL, "
            "sku varchar(64) NOT NULL, price bigint NOT NULL, stock integer, "
            "active boolean NOT NULL) ON COMMIT DELETE ROWS"
        )
        # Emptied explicitly too: a caller's transaction may span several batches.
        cursor.execute(f"DELETE FROM {STAGE_TABLE}")
        with cursor.copy(f"COPY {STAGE_TABLE} FROM STDIN") as copy:
            copy.write(_copy_text(self.feed, rows))

    def write_batch(self, lo: int, hi: int) -> BatchCounts:
        rows, replaced = self.plan.batch(lo, hi)
        params: dict[str, int | datetime] = {"merchant": self.merchant_id, "now": timezone.now()}
        superseded = created = updated = 0
        changed: set[int] = set()
        with connection.cursor() as cursor:
            if replaced.size:
                cursor.execute(
                    f"""
                    WITH replaced AS (
                        UPDATE {self.offer} SET active = false, updated_at = %(now)s
                        WHERE id = ANY(%(ids)s) AND active RETURNING product_id
                    ), marked AS (
                        INSERT INTO {self.refresh} (product_id) SELECT product_id FROM replaced
                    )
                    SELECT count(*), array_agg(DISTINCT product_id) FROM replaced
                    """,
                    {**params, "ids": replaced.tolist()},
                )
                superseded, products = cursor.fetchone()
                changed.update(products or ())
            if rows.size:
                self._stage(cursor, rows)
                cursor.execute(
                    f"""
                    WITH written AS (
                        INSERT INTO {self.offer} AS o (product_id, merchant_id, merchant_sku,
                            unit_price, stock, active, created_at, updated_at)
                        SELECT product_id, %(merchant)s, sku, price, stock, active,
                            %(now)s, %(now)s
                        FROM {STAGE_TABLE}
                        ON CONFLICT (merchant_id, merchant_sku) DO UPDATE
                        SET unit_price = excluded.unit_price, stock = excluded.stock,
                            active = excluded.active, updated_at = excluded.updated_at
                        WHERE o.product_id = excluded.product_id
                          AND (o.unit_price, o.stock, o.active) IS DISTINCT FROM
                              (excluded.unit_price, excluded.stock, excluded.active)
                        RETURNING (o.xmax = 0) AS inserted, o.product_id
                    ), marked AS (
                        INSERT INTO {self.refresh} (product_id) SELECT product_id FROM written
                    )
                    SELECT count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted),
                        array_agg(DISTINCT product_id)
                    FROM written
                    """,
                    params,
                )
                created, updated, products = cursor.fetchone()
                changed.update(products or ())
        valid = int(self.feed.valid[lo:hi].sum())
        return BatchCounts(
            created, updated, valid - created - updated, superseded, tuple(sorted(changed))
        )


class OrmOfferWriter:
    """The same plan through the ORM, for SQLite and any other database."""

    def __init__(self, *, merchant_id: int, feed: ValidatedFeed, plan: WritePlan) -> None:
        self.merchant_id = merchant_id
        self.feed = feed
        self.plan = plan

    def write_batch(self, lo: int, hi: int) -> BatchCounts:
        rows, replaced = self.plan.batch(lo, hi)
        now = timezone.now()
        changed_products = self._supersede(replaced, now)
        superseded = len(changed_products)
        offers = [self._offer(row, now) for row in rows.tolist()]
        created = [offer for offer in offers if offer.pk is None]
        updated = self._differing([offer for offer in offers if offer.pk is not None])
        Offer.objects.bulk_create(created, batch_size=500)
        Offer.objects.bulk_update(
            updated, ["unit_price", "stock", "active", "updated_at"], batch_size=500
        )
        changed_products += [offer.product_id for offer in (*created, *updated)]
        # The page versions go once per import, when batches_write's offers_changed_deferred
        # ends (what the COPY writer relies on too), not once per batch as well.
        catalog_cheapest_mark_stale(product_ids=changed_products, page_cache=False)
        valid = int(self.feed.valid[lo:hi].sum())
        return BatchCounts(
            len(created),
            len(updated),
            valid - len(created) - len(updated),
            superseded,
            tuple(sorted(set(changed_products))),
        )

    def _offer(self, row: int, now) -> Offer:
        stock = int(self.feed.stock[row])
        existing = int(self.plan.existing_id[row])
        return Offer(
            pk=None if existing < 0 else existing,
            product_id=int(self.feed.product_id[row]),
            merchant_id=self.merchant_id,
            merchant_sku=str(self.feed.sku[row]),
            unit_price=int(self.feed.price[row]),
            stock=None if stock == UNLIMITED else stock,
            active=bool(self.feed.active[row]),
            created_at=now,
            updated_at=now,
        )

    def _supersede(self, ids: np.ndarray, now) -> list[int]:
        if ids.size == 0:
            return []
        offers = Offer.objects.filter(pk__in=ids.tolist(), active=True)
        products = list(offers.values_list("product_id", flat=True))
        offers.update(active=False, updated_at=now)
        return products

    def _differing(self, offers: list[Offer]) -> list[Offer]:
        """Those whose stored price, stock or active differ now (the snapshot may be older,
        e.g. an offer an earlier batch superseded), on the same product."""
        current = {
            pk: values
            for pk, *values in Offer.objects.filter(pk__in=[o.pk for o in offers]).values_list(
                "pk", "product_id", "unit_price", "stock", "active"
            )
        }
        return [
            offer
            for offer in offers
            if offer.pk in current
            and current[offer.pk][0] == offer.product_id
            and tuple(current[offer.pk][1:]) != (offer.unit_price, offer.stock, offer.active)
        ]


def offer_writer_for(*, merchant_id: int, feed: ValidatedFeed, plan: WritePlan):
    """The writer for the database in use; ``write_batch(lo, hi)`` runs in the caller's
    transaction, on whichever thread (and so connection) calls it."""
    writer = PostgresOfferWriter if connection.vendor == "postgresql" else OrmOfferWriter
    return writer(merchant_id=merchant_id, feed=feed, plan=plan)


def product_gtins(product_ids: list[int]) -> Mapping[int, str]:
    return dict(Product.objects.filter(pk__in=product_ids).values_list("id", "gtin"))
