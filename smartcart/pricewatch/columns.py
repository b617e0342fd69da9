"""A chunk of open carts read as NumPy columns, set-based: no Python object per cart line.

Two statements a chunk, whatever its size, plus one for the products no earlier chunk of the
run met: the carts (version, owner, destination: the one string a cart has), every line of
them, and the offers of their products (``offer_book.OfferBook``, read once a run and kept).
Each line's own offer (its state, stock and merchant) is looked up in the book, and the
chunk's candidate offers are the book's buyable offers of its products. On PostgreSQL the
lines come as ONE value: the server packs every row's columns as big-endian int8s
(``int8send``) and concatenates them (``string_agg`` over bytea), so the driver returns one
bytea and NumPy reads it with one ``frombuffer``. (``COPY ... TO STDOUT`` was tried first:
psycopg hands a COPY stream over a row at a time, a Python iteration per line, about a fifth
of the job's time at 100k carts.) Other databases (SQLite, the embedded default) read the
same columns through the ORM: the plain path, a tuple per row.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.db import connection

from smartcart.pricewatch.offer_book import BOOK_FIELDS, OfferBook, packed_columns
from storefront.models import Cart, CartLine

# Line columns, in this order: cart id, line id, quantity, product id, own offer id, own
# offer active (0/1: the offer and its merchant), own offer stock (-1: unlimited), own
# merchant id, unit price when added, own merchant ships from warehouses (0/1: pricing
# version 2), own offer in the run's book (0: the line is left to the single-cart path).
# Lines by cart, then as added (created_at, id).
LINE_FIELDS = (
    "cart",
    "line",
    "qty",
    "product",
    "offer",
    "offer_active",
    "stock",
    "merchant",
    "snapshot",
    "merchant_v2",
    "known",
)
# Offer columns: offer id, product id, merchant id, unit price, stock (-1: unlimited),
# the merchant's discount minimum units and basis points (-1: none), whether the merchant
# ships from warehouses (0/1).
OFFER_FIELDS = ("offer", "product", "merchant", "price", "stock", "dmin", "dbp", "v2")
# The lines as read: cart, line, quantity, product, offer, unit price when added.
_READ = 6


@dataclass(frozen=True)
class ChunkColumns:
    """``lines[k]`` / ``offers[k]``: int64 column ``k`` of ``LINE_FIELDS`` / ``OFFER_FIELDS``
    (``offers``: the buyable offers of the chunk's products). Per cart found (ascending id):
    ``cart_ids``, ``versions``, ``owners`` (-1: none) and ``postal_codes`` (strings)."""

    cart_ids: np.ndarray
    versions: np.ndarray
    owners: np.ndarray
    postal_codes: list[str]
    lines: np.ndarray
    offers: np.ndarray

    def line(self, name: str) -> np.ndarray:
        return self.lines[LINE_FIELDS.index(name)]

    def offer(self, name: str) -> np.ndarray:
        return self.offers[OFFER_FIELDS.index(name)]


def _t(model) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _line_sql() -> str:
    columns = ("l.cart_id", "l.id", "l.quantity", "l.product_id", "l.offer_id")
    packed = " || ".join(f"int8send({column}::bigint)" for column in columns)
    return (
        f"SELECT string_agg({packed} || int8send(l.unit_price_snapshot::bigint), ''::bytea "
        f"ORDER BY l.cart_id, l.created_at, l.id) FROM {_t(CartLine)} l "
        "WHERE l.cart_id = ANY(%s)"
    )


def _lines_read(ids: list[int]) -> np.ndarray:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_line_sql(), [ids])
            row = cursor.fetchone()
        return packed_columns(None if row is None else row[0], _READ)
    rows = list(
        CartLine.objects.filter(cart_id__in=ids)
        .order_by("cart_id", "created_at", "id")
        .values_list("cart_id", "id", "quantity", "product_id", "offer_id", "unit_price_snapshot")
    )
    if not rows:
        return np.zeros((_READ, 0), np.int64)
    return np.array(rows, np.int64).T.copy()


def _carts_read(ids: list[int]) -> list:
    if connection.vendor != "postgresql":
        return list(
            Cart.objects.filter(id__in=ids)
            .order_by("id")
            .values_list("id", "version", "owner_id", "postal_code")
        )
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, version, owner_id, postal_code FROM {_t(Cart)} "
            "WHERE id = ANY(%s) ORDER BY id",
            [ids],
        )
        return cursor.fetchall()


@dataclass(frozen=True)
class ChunkRows:
    """A chunk's carts (id, version, owner, destination; by id) and lines (``_READ`` columns)
    as read from the database, before the run's book is consulted."""

    carts: list
    lines: np.ndarray


def chunk_rows_read(*, cart_ids: Sequence[int]) -> ChunkRows:
    """The carts of ``cart_ids`` (gone ones left out) and their lines: two statements."""
    ids = sorted({int(i) for i in cart_ids})
    return ChunkRows(carts=_carts_read(ids), lines=_lines_read(ids))


def chunk_columns_read(
    *, cart_ids: Sequence[int], book: OfferBook, rows: ChunkRows | None = None
) -> ChunkColumns:
    """The carts of ``cart_ids`` (gone ones left out), their lines and their products'
    buyable offers as columns (see the module docstring); ``rows``: the carts and lines read
    already (``chunk_rows_read``)."""
    if rows is None:
        rows = chunk_rows_read(cart_ids=cart_ids)
    carts = rows.carts
    cart, line, qty, product, offer, snapshot = rows.lines
    book.cover(product)
    at = book.find(offer)
    known = at >= 0
    own = book.offers[:, np.where(known, at, 0)]
    col = {name: own[k] for k, name in enumerate(BOOK_FIELDS)}
    lines = np.stack(
        [
            cart,
            line,
            qty,
            product,
            offer,
            col["buyable"] * known,
            col["stock"],
            col["merchant"],
            snapshot,
            col["v2"] * known,
            known.astype(np.int64),
        ]
    )
    candidates = book.of_products(product)
    candidates = candidates[book.column("buyable")[candidates] == 1]
    return ChunkColumns(
        cart_ids=np.array([c[0] for c in carts], np.int64),
        versions=np.array([c[1] for c in carts], np.int64),
        owners=np.array([-1 if c[2] is None else c[2] for c in carts], np.int64),
        postal_codes=[c[3] for c in carts],
        lines=lines,
        offers=book.offers[: len(OFFER_FIELDS), candidates],
    )
