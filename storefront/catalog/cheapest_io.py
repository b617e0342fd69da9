"""Bulk reads and writes of the cheapest-offer refresh, one chunk of products at a time, in
the caller's transaction.

PostgreSQL moves the chunk's ids, offers and results through COPY and session-private
tables (``ON COMMIT DELETE ROWS``: empty again after every chunk), so a chunk of 50,000
products is a handful of statements with no per-row parameters. Other databases (SQLite)
use plain queries with the same meaning. The offer filter is built by the ORM from the
selectors' ``offer_buyable_q``, so stored and live "cheapest" can never drift apart.
"""

import json
from collections.abc import Iterable

import numpy as np
from django.db import connection
from django.db.models import QuerySet
from django.db.models.expressions import RawSQL

from storefront.catalog.selectors import offer_buyable_q
from storefront.models import CheapestOfferRefresh, Offer, Product, ProductCheapest

_OFFER_COLUMNS = ("product_id", "id", "merchant_id", "unit_price")
_TEMP_TABLES = {
    "cheapest_chunk_products": "product_id bigint NOT NULL",
    "cheapest_chunk_refresh": "id bigint NOT NULL",
    "cheapest_chunk_result": "product_id bigint NOT NULL, offer_id bigint, price bigint, "
    "offer_count integer NOT NULL",
}


def ids_in(ids: Iterable[int]) -> RawSQL:
    """``field__in=ids_in(ids)``: any number of ids as one query parameter (an array on
    PostgreSQL, JSON on SQLite), instead of one placeholder per id."""
    ids = [int(i) for i in (ids.tolist() if isinstance(ids, np.ndarray) else ids)]
    if connection.vendor == "postgresql":
        return RawSQL("SELECT unnest(%s::bigint[])", [ids])
    return RawSQL("SELECT value FROM json_each(%s)", [json.dumps(ids)])


def _quote(model) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _buyable(product_ids: np.ndarray, product_filter) -> QuerySet:
    """The chunk's buyable offers. The id range lets the planner walk the (product, active,
    unit_price) index over just the chunk instead of hashing the whole offer table."""
    return (
        Offer.objects.filter(
            offer_buyable_q(),
            product_id__gte=int(product_ids[0]),
            product_id__lte=int(product_ids[-1]),
            product_id__in=product_filter,
        )
        .order_by("product_id", "id")
        .values_list(*_OFFER_COLUMNS)
    )


def _copy_in(cursor, table: str, columns: list[np.ndarray]) -> None:
    """Replaces a temporary table's rows by integer columns (-1: NULL in nullable ones).
    Emptied explicitly: a caller's enclosing transaction may keep ``ON COMMIT`` from firing
    between chunks."""
    cursor.execute(f"DELETE FROM {table}")
    if columns[0].size == 0:
        return
    text = [np.where(column < 0, "\\N", column.astype(np.str_)) for column in columns]
    lines = text[0]
    for column in text[1:]:
        lines = np.strings.add(np.strings.add(lines, "\t"), column)
    with cursor.copy(f"COPY {table} FROM STDIN") as copy:
        copy.write(("\n".join(lines.tolist()) + "\n").encode())


def _ensure_temp_tables(cursor) -> None:
    for name, columns in _TEMP_TABLES.items():
        cursor.execute(
            f"CREATE TEMPORARY TABLE IF NOT EXISTS {name} ({columns}) ON COMMIT DELETE ROWS"
        )


_UPSERT = """
    INSERT INTO {table} AS s (product_id, offer_id, price, offer_count, updated_at)
    {rows}
    ON CONFLICT (product_id) DO UPDATE SET offer_id = excluded.offer_id,
        price = excluded.price, offer_count = excluded.offer_count,
        updated_at = excluded.updated_at
    WHERE s.offer_id IS DISTINCT FROM excluded.offer_id
       OR s.price IS DISTINCT FROM excluded.price OR s.offer_count <> excluded.offer_count
"""


class PostgresChunkIO:
    """One chunk's products, held in a session-private table for every statement."""

    def __init__(self, product_ids: np.ndarray) -> None:
        self.product_ids = product_ids
        with connection.cursor() as cursor:
            _ensure_temp_tables(cursor)
            _copy_in(cursor, "cheapest_chunk_products", [product_ids])
            cursor.execute("ANALYZE cheapest_chunk_products")

    def refresh_ids(self) -> np.ndarray:
        """Every pending refresh row of the chunk's products."""
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT r.id FROM {_quote(CheapestOfferRefresh)} r "
                "JOIN cheapest_chunk_products c ON c.product_id = r.product_id"
            )
            return np.array([row[0] for row in cursor.fetchall()], dtype=np.int64)

    def read_offers(self) -> np.ndarray:
        """(product, offer, merchant, price) of the buyable offers of the chunk's (sorted)
        products, by product then offer."""
        if self.product_ids.size == 0:
            return np.empty((0, len(_OFFER_COLUMNS)), dtype=np.int64)
        chunk = RawSQL("SELECT product_id FROM cheapest_chunk_products", ())
        sql, params = _buyable(self.product_ids, chunk).query.sql_with_params()
        data = bytearray()
        with (
            connection.cursor() as cursor,
            # compose_sql is PostgreSQL's (psycopg 3); the stubs know only the base operations.
            cursor.copy(f"COPY ({connection.ops.compose_sql(sql, params)}) TO STDOUT") as copy,  # type: ignore[attr-defined]
        ):
            for block in copy:
                data += block
        return np.array(bytes(data).split(), dtype=np.int64).reshape(-1, len(_OFFER_COLUMNS))

    def write(self, offer_id, price, count, now) -> int:
        """Upserts the results, leaving rows that already hold them untouched."""
        with connection.cursor() as cursor:
            columns = [self.product_ids, offer_id, price, count]
            _copy_in(cursor, "cheapest_chunk_result", columns)
            # The join skips products deleted since their refresh was requested.
            rows = (
                "SELECT r.product_id, r.offer_id, r.price, r.offer_count, %s "
                f"FROM cheapest_chunk_result r JOIN {_quote(Product)} p ON p.id = r.product_id"
            )
            cursor.execute(_UPSERT.format(table=_quote(ProductCheapest), rows=rows), [now])
            return cursor.rowcount

    def forget(self, refresh_ids: np.ndarray) -> None:
        """Deletes exactly these refresh rows (never "every row up to an id": a row with a
        lower id may have committed after they were read)."""
        if refresh_ids.size == 0:
            return
        with connection.cursor() as cursor:
            _copy_in(cursor, "cheapest_chunk_refresh", [refresh_ids])
            cursor.execute(
                f"DELETE FROM {_quote(CheapestOfferRefresh)} AS r USING cheapest_chunk_refresh "
                "AS f WHERE r.id = f.id"
            )


class OrmChunkIO:
    def __init__(self, product_ids: np.ndarray) -> None:
        self.product_ids = product_ids

    def refresh_ids(self) -> np.ndarray:
        rows = CheapestOfferRefresh.objects.filter(product_id__in=ids_in(self.product_ids))
        return np.array(list(rows.values_list("id", flat=True)), dtype=np.int64)

    def read_offers(self) -> np.ndarray:
        if self.product_ids.size == 0:
            return np.empty((0, len(_OFFER_COLUMNS)), dtype=np.int64)
        rows = list(_buyable(self.product_ids, ids_in(self.product_ids)))
        return np.array(rows, dtype=np.int64).reshape(-1, len(_OFFER_COLUMNS))

    def write(self, offer_id, price, count, now) -> int:
        existing = set(
            Product.objects.filter(pk__in=ids_in(self.product_ids)).values_list("pk", flat=True)
        )
        rows = [
            (product, None if offer < 0 else offer, None if cents < 0 else cents, n, now)
            for product, offer, cents, n in zip(
                self.product_ids.tolist(), offer_id.tolist(), price.tolist(), count.tolist(),
                strict=True,
            )
            if product in existing
        ]  # fmt: skip
        sql = _UPSERT.format(table=_quote(ProductCheapest), rows="VALUES (%s, %s, %s, %s, %s)")
        with connection.cursor() as cursor:
            cursor.executemany(sql, rows)
            return max(cursor.rowcount, 0)

    def forget(self, refresh_ids: np.ndarray) -> None:
        if refresh_ids.size:
            CheapestOfferRefresh.objects.filter(pk__in=ids_in(refresh_ids)).delete()


def chunk_io(product_ids: np.ndarray):
    """The chunk I/O for the database in use; ``product_ids`` sorted and unique."""
    io = PostgresChunkIO if connection.vendor == "postgresql" else OrmChunkIO
    return io(product_ids)
