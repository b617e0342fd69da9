"""A chunk of open carts read as NumPy columns, set-based: no Python object per cart line.

Three statements a chunk, whatever its size: the carts (version, owner, destination: the one
string a cart has), every line of them with its own offer's state, and every buyable offer of
their products with its merchant's discount. On PostgreSQL the lines and the offers come as
ONE value each: the server packs every row's columns as big-endian int8s (``int8send``, NULLs
written as -1 in SQL) and concatenates them (``string_agg`` over bytea), so the driver
returns one bytea and NumPy reads it with one ``frombuffer``. (``COPY ... TO STDOUT`` was
tried first: psycopg hands a COPY stream over a row at a time, a Python iteration per line,
about a fifth of the job's time at 100k carts.) Other databases (SQLite, the embedded
default) read the same columns through the ORM: the plain path, a tuple per row.

Names are not read here: only a notice needs them, so ``names_read`` fetches them (one
statement) for a chunk with notices.
"""

from collections.abc import Sequence
from dataclasses import dataclass

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
        "AND w.active)::int"
    )


def _packed_sql(columns: list[str], rest: str, order: str = "") -> str:
    """One row, one value: every row's ``columns`` as big-endian int8s, concatenated (in
    ``order``), so the rows arrive as one bytea and become an array with one ``frombuffer``
    (a COPY stream is read a row at a time by the driver)."""
    packed = " || ".join(f"int8send(({column})::bigint)" for column in columns)
    return f"SELECT string_agg({packed}, ''::bytea{' ORDER BY ' + order if order else ''}) {rest}"


def _line_sql() -> str:
    return _packed_sql(
        [
            "l.cart_id",
            "l.id",
            "l.quantity",
            "l.product_id",
            "o.id",
            "o.active::int",
            "COALESCE(o.stock, -1)",
            "o.merchant_id",
            "m.active::int",
            "l.unit_price_snapshot",
            _v2_sql("o.merchant_id"),
        ],
        f"FROM {_t(CartLine)} l JOIN {_t(Offer)} o ON o.id = l.offer_id "
        f"JOIN {_t(Merchant)} m ON m.id = o.merchant_id WHERE l.cart_id = ANY(%s)",
        order="l.cart_id, l.created_at, l.id",
    )


def _offer_sql() -> str:
    return _packed_sql(
        [
            "o.id",
            "o.product_id",
            "o.merchant_id",
            "o.unit_price",
            "COALESCE(o.stock, -1)",
            "COALESCE(m.discount_min_units, -1)",
            "COALESCE(m.discount_basis_points, -1)",
            _v2_sql("o.merchant_id"),
        ],
        f"FROM {_t(Offer)} o JOIN {_t(Merchant)} m ON m.id = o.merchant_id "
        "WHERE o.active AND m.active AND o.product_id IN "
        f"(SELECT DISTINCT product_id FROM {_t(CartLine)} WHERE cart_id = ANY(%s))",
    )


def packed_columns(data: bytes | None, width: int) -> np.ndarray:
    """int64[width, rows] from ``_packed_sql``'s value (``None``: no row)."""
    if not data:
        return np.zeros((width, 0), np.int64)
    return np.frombuffer(data, ">i8").reshape(-1, width).T.astype(np.int64)


def _fetch(sql: str, ids: list[int], width: int) -> np.ndarray:
    with connection.cursor() as cursor:
        cursor.execute(sql, [ids])
        row = cursor.fetchone()
    return packed_columns(None if row is None else row[0], width)


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


def chunk_columns_read(*, cart_ids: Sequence[int]) -> ChunkColumns:
    """The carts of ``cart_ids`` (gone ones left out), their lines and their products'
    buyable offers as columns (see the module docstring): three statements."""
    ids = sorted({int(i) for i in cart_ids})
    carts: list = (
        list(
            Cart.objects.filter(id__in=ids)
            .order_by("id")
            .values_list("id", "version", "owner_id", "postal_code")
        )
        if connection.vendor != "postgresql"
        else []
    )
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT id, version, owner_id, postal_code FROM {_t(Cart)} "
                "WHERE id = ANY(%s) ORDER BY id",
                [ids],
            )
            carts = cursor.fetchall()
        lines = _fetch(_line_sql(), ids, len(LINE_FIELDS))
        offers = _fetch(_offer_sql(), ids, len(OFFER_FIELDS))
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
    if connection.vendor == "postgresql":
        # One array parameter each: ``id__in`` writes a placeholder per id, and psycopg's
        # parsing of a statement with ten thousand of them cost more than running it.
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT 0, id, name FROM {_t(Product)} WHERE id = ANY(%s) UNION ALL "
                f"SELECT 1, id, name FROM {_t(Merchant)} WHERE id = ANY(%s)",
                [products, merchants],
            )
            rows = cursor.fetchall()
    names = Names(products={}, merchants={})
    for kind, row_id, name in rows:
        (names.merchants if kind else names.products)[row_id] = name
    return names
