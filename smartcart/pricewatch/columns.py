"""A chunk of open carts read as NumPy columns, set-based: no Python object per cart line.

Three statements a chunk, whatever its size: the carts (version, owner, destination: the one
string a cart has), every line of them with its own offer's state, and every buyable offer of
their products with its merchant's discount. On PostgreSQL the lines and the offers stream
with ``COPY (SELECT ...) TO STDOUT (FORMAT BINARY)``: every column is a non-null ``bigint``
(NULLs are written as -1 in SQL), so each row has the same width and the whole stream is one
``np.frombuffer`` with a structured dtype. Other databases (SQLite, the embedded default) read
the same columns through the ORM: the plain path, a tuple per row.

Names are not read here: only a notice needs them, so ``names_read`` fetches them (one
statement) for a chunk with notices.
"""

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from django.db import connection
from django.db.models import Exists, OuterRef, Value

from storefront.models import Cart, CartLine, Merchant, Offer, Product, Warehouse

# Line columns, in this order: cart id, line id, quantity, product id, own offer id, own
# offer active (0/1), own offer stock (-1: unlimited), own merchant id, own merchant active
# (0/1), unit price when added, own merchant ships from warehouses (0/1: pricing version 2).
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
    "merchant_active",
    "snapshot",
    "merchant_v2",
)
# Offer columns: offer id, product id, merchant id, unit price, stock (-1: unlimited),
# the merchant's discount minimum units and basis points (-1: none), whether the merchant
# ships from warehouses (0/1).
OFFER_FIELDS = ("offer", "product", "merchant", "price", "stock", "dmin", "dbp", "v2")


@dataclass(frozen=True)
class ChunkColumns:
    """``lines[k]`` / ``offers[k]``: int64 column ``k`` of ``LINE_FIELDS`` / ``OFFER_FIELDS``.
    Per cart found (ascending id): ``cart_ids``, ``versions``, ``owners`` (-1: none) and
    ``postal_codes`` (strings)."""

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


def _has_warehouse(merchant: str) -> Exists:
    return Exists(Warehouse.objects.filter(merchant_id=OuterRef(merchant), active=True))


def _v2_sql(merchant: str) -> str:
    return (
        f"EXISTS (SELECT 1 FROM {_t(Warehouse)} w WHERE w.merchant_id = {merchant} "
        "AND w.active)::int::bigint"
    )


def _line_sql() -> str:
    return (
        "SELECT l.cart_id::bigint, l.id::bigint, l.quantity::bigint, l.product_id::bigint, "
        "o.id::bigint, o.active::int::bigint, COALESCE(o.stock, -1)::bigint, "
        "o.merchant_id::bigint, m.active::int::bigint, l.unit_price_snapshot::bigint, "
        f"{_v2_sql('o.merchant_id')} "
        f"FROM {_t(CartLine)} l JOIN {_t(Offer)} o ON o.id = l.offer_id "
        f"JOIN {_t(Merchant)} m ON m.id = o.merchant_id "
        "WHERE l.cart_id = ANY({ids}) ORDER BY l.cart_id, l.created_at, l.id"
    )


def _offer_sql() -> str:
    return (
        "SELECT o.id::bigint, o.product_id::bigint, o.merchant_id::bigint, "
        "o.unit_price::bigint, COALESCE(o.stock, -1)::bigint, "
        "COALESCE(m.discount_min_units, -1)::bigint, "
        "COALESCE(m.discount_basis_points, -1)::bigint, "
        f"{_v2_sql('o.merchant_id')} "
        f"FROM {_t(Offer)} o JOIN {_t(Merchant)} m ON m.id = o.merchant_id "
        "WHERE o.active AND m.active AND o.product_id IN "
        f"(SELECT DISTINCT product_id FROM {_t(CartLine)} WHERE cart_id = ANY({{ids}}))"
    )


def binary_columns(data: bytes | bytearray | memoryview, width: int) -> np.ndarray:
    """int64[width, rows] from a ``COPY ... (FORMAT BINARY)`` stream of ``width`` non-null
    bigint columns: a row is a 2-byte field count, then per field a 4-byte length (8) and
    the 8-byte big-endian value; the file has a 19-byte header (plus its extension area) and
    a 2-byte trailer."""
    view = memoryview(data)
    if bytes(view[:11]) != b"PGCOPY\n\xff\r\n\x00":
        raise ValueError("not a PostgreSQL binary COPY stream")
    start = 19 + int.from_bytes(view[15:19], "big")
    body = view[start:-2]
    fields = [("n", ">i2")]
    for k in range(width):
        fields += [(f"len{k}", ">i4"), (f"v{k}", ">i8")]
    rows = np.frombuffer(body, np.dtype(fields))
    if rows.size and (rows["n"] != width).any():
        raise ValueError("binary COPY rows of an unexpected width")
    out = np.empty((width, rows.size), np.int64)
    for k in range(width):
        if rows.size and (rows[f"len{k}"] != 8).any():
            raise ValueError(f"binary COPY column {k} is not a non-null bigint")
        out[k] = rows[f"v{k}"]
    return out


class Meter(Protocol):
    """Counts statements and their seconds (``services._QueryMeter``): a COPY is not seen by
    the connection's execute wrappers."""

    queries: int
    seconds: float


def _copy(sql: str, ids: list[int], width: int, meter: Meter | None) -> np.ndarray:
    # The ids are written into the statement as an array literal of ints (COPY takes no
    # server-side parameters, and Django's debug cursor passes none).
    array = "ARRAY[" + ",".join(str(int(i)) for i in ids) + "]::bigint[]"
    start = time.perf_counter()
    buffer = bytearray()
    with (
        connection.cursor() as cursor,
        cursor.copy(f"COPY ({sql.format(ids=array)}) TO STDOUT (FORMAT BINARY)") as copy,
    ):
        for data in copy:
            buffer += data
    if meter is not None:
        meter.queries += 1
        meter.seconds += time.perf_counter() - start
    return binary_columns(buffer, width)


def _rows(rows: list[tuple], width: int) -> np.ndarray:
    if not rows:
        return np.zeros((width, 0), np.int64)
    return np.array(rows, np.int64).T.copy()


def _orm_lines(cart_ids: list[int]) -> np.ndarray:
    rows = (
        CartLine.objects.filter(cart_id__in=cart_ids)
        .annotate(merchant_v2=_has_warehouse("offer__merchant_id"))
        .order_by("cart_id", "created_at", "id")
        .values_list(
            "cart_id",
            "id",
            "quantity",
            "product_id",
            "offer_id",
            "offer__active",
            "offer__stock",
            "offer__merchant_id",
            "offer__merchant__active",
            "unit_price_snapshot",
            "merchant_v2",
        )
    )
    return _rows(
        [
            (*r[:5], int(r[5]), -1 if r[6] is None else r[6], r[7], int(r[8]), r[9], int(r[10]))
            for r in rows
        ],
        len(LINE_FIELDS),
    )


def _orm_offers(cart_ids: list[int]) -> np.ndarray:
    products = CartLine.objects.filter(cart_id__in=cart_ids).values("product_id")
    rows = (
        Offer.objects.filter(product_id__in=products, active=True, merchant__active=True)
        .annotate(v2=_has_warehouse("merchant_id"))
        .order_by()
        .values_list(
            "id",
            "product_id",
            "merchant_id",
            "unit_price",
            "stock",
            "merchant__discount_min_units",
            "merchant__discount_basis_points",
            "v2",
        )
    )
    return _rows(
        [(*r[:4], *(-1 if v is None else int(v) for v in r[4:])) for r in rows],
        len(OFFER_FIELDS),
    )


def chunk_columns_read(*, cart_ids: Sequence[int], meter: Meter | None = None) -> ChunkColumns:
    """The carts of ``cart_ids`` (gone ones left out), their lines and their products'
    buyable offers as columns (see the module docstring): three statements."""
    ids = sorted({int(i) for i in cart_ids})
    carts = list(
        Cart.objects.filter(id__in=ids)
        .order_by("id")
        .values_list("id", "version", "owner_id", "postal_code")
    )
    if connection.vendor == "postgresql":
        lines = _copy(_line_sql(), ids, len(LINE_FIELDS), meter)
        offers = _copy(_offer_sql(), ids, len(OFFER_FIELDS), meter)
    else:
        lines, offers = _orm_lines(ids), _orm_offers(ids)
    return ChunkColumns(
        cart_ids=np.array([c[0] for c in carts], np.int64),
        versions=np.array([c[1] for c in carts], np.int64),
        owners=np.array([-1 if c[2] is None else c[2] for c in carts], np.int64),
        postal_codes=[c[3] for c in carts],
        lines=lines,
        offers=offers,
    )


@dataclass(frozen=True)
class Names:
    products: dict[int, str]
    merchants: dict[int, str]


def names_read(*, product_ids: Sequence[int], merchant_ids: Sequence[int]) -> Names:
    """The product and merchant names a chunk's notices show, in one statement."""
    products = sorted({int(i) for i in product_ids})
    merchants = sorted({int(i) for i in merchant_ids})
    rows = (
        Product.objects.filter(id__in=products)
        .order_by()
        .annotate(kind=Value(0))
        .values_list("kind", "id", "name")
        .union(
            Merchant.objects.filter(id__in=merchants)
            .order_by()
            .annotate(kind=Value(1))
            .values_list("kind", "id", "name"),
            all=True,
        )
    )
    names = Names(products={}, merchants={})
    for kind, row_id, name in rows:
        (names.merchants if kind else names.products)[row_id] = name
    return names
