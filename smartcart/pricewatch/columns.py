"""A chunk of open carts read as NumPy columns, set-based: no Python object per cart line.

Three statements a chunk, whatever its size: the carts (version, owner, destination: the one
string a cart has), every line of them with its own offer's state, and every buyable offer of
their products with its merchant's discount. On PostgreSQL the lines and the offers stream
with ``COPY (SELECT ...) TO STDOUT (FORMAT BINARY)``: every column is a non-null ``bigint``
(NULLs are written as -1 in SQL), so each row has the same width and the whole stream is one
``np.frombuffer`` with a structured dtype. Other databases (SQLite, the embedded default) read
the same columns through the ORM: the plain path, a tuple per row.

Names are not read here: only a notice needs them, so ``product_names_read`` fetches the
products' for a chunk with notices; merchants (few) are read once a run (``merchants_read``,
with which of them ship from warehouses).
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.db import connection
from django.db.models import Exists, OuterRef

from storefront.models import Cart, CartLine, Merchant, Offer, Product, Warehouse

# Line columns, in this order: cart id, line id, quantity, product id, own offer id, own
# offer active (0/1), own offer stock (-1: unlimited), own merchant id, own merchant active
# (0/1), unit price when added. Lines by cart, then as added (created_at, id).
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
)
# Offer columns: offer id, product id, merchant id, unit price, stock (-1: unlimited),
# the merchant's discount minimum units and basis points (-1: none).
OFFER_FIELDS = ("offer", "product", "merchant", "price", "stock", "dmin", "dbp")


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


def _line_sql() -> str:
    return (
        "SELECT l.cart_id::bigint, l.id::bigint, l.quantity::bigint, l.product_id::bigint, "
        "o.id::bigint, o.active::int::bigint, COALESCE(o.stock, -1)::bigint, "
        "o.merchant_id::bigint, m.active::int::bigint, l.unit_price_snapshot::bigint "
        f"FROM {_t(CartLine)} l JOIN {_t(Offer)} o ON o.id = l.offer_id "
        f"JOIN {_t(Merchant)} m ON m.id = o.merchant_id "
        "WHERE l.cart_id = ANY(%s) ORDER BY l.cart_id, l.created_at, l.id"
    )


def _offer_sql() -> str:
    return (
        "SELECT o.id::bigint, o.product_id::bigint, o.merchant_id::bigint, "
        "o.unit_price::bigint, COALESCE(o.stock, -1)::bigint, "
        "COALESCE(m.discount_min_units, -1)::bigint, "
        "COALESCE(m.discount_basis_points, -1)::bigint "
        f"FROM {_t(Offer)} o JOIN {_t(Merchant)} m ON m.id = o.merchant_id "
        "WHERE o.active AND m.active AND o.product_id IN "
        f"(SELECT DISTINCT product_id FROM {_t(CartLine)} WHERE cart_id = ANY(%s))"
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


def _copy(sql: str, params: Sequence, width: int) -> np.ndarray:
    buffer = bytearray()
    with (
        connection.cursor() as cursor,
        cursor.copy(f"COPY ({sql}) TO STDOUT (FORMAT BINARY)", params) as copy,
    ):
        for data in copy:
            buffer += data
    return binary_columns(buffer, width)


def _rows(rows: list[tuple], width: int) -> np.ndarray:
    if not rows:
        return np.zeros((width, 0), np.int64)
    return np.array(rows, np.int64).T.copy()


def _orm_lines(cart_ids: list[int]) -> np.ndarray:
    rows = (
        CartLine.objects.filter(cart_id__in=cart_ids)
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
        )
    )
    return _rows(
        [(*r[:5], int(r[5]), -1 if r[6] is None else r[6], r[7], int(r[8]), r[9]) for r in rows],
        len(LINE_FIELDS),
    )


def _orm_offers(cart_ids: list[int]) -> np.ndarray:
    products = CartLine.objects.filter(cart_id__in=cart_ids).values("product_id")
    rows = (
        Offer.objects.filter(product_id__in=products, active=True, merchant__active=True)
        .order_by()
        .values_list(
            "id",
            "product_id",
            "merchant_id",
            "unit_price",
            "stock",
            "merchant__discount_min_units",
            "merchant__discount_basis_points",
        )
    )
    return _rows(
        [(*r[:4], *(-1 if v is None else v for v in r[4:])) for r in rows], len(OFFER_FIELDS)
    )


def chunk_columns_read(*, cart_ids: Sequence[int]) -> ChunkColumns:
    """The carts of ``cart_ids`` (gone ones left out), their lines and their products'
    buyable offers as columns (see the module docstring): three statements."""
    ids = sorted({int(i) for i in cart_ids})
    carts = list(
        Cart.objects.filter(id__in=ids)
        .order_by("id")
        .values_list("id", "version", "owner_id", "postal_code")
    )
    if connection.vendor == "postgresql":
        lines = _copy(_line_sql(), [ids], len(LINE_FIELDS))
        offers = _copy(_offer_sql(), [ids], len(OFFER_FIELDS))
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
class Merchants:
    """Every merchant's name, and the ids (sorted) of those that ship from warehouses
    (pricing contract version 2: an active warehouse), whose carts the batch engine cannot
    price."""

    names: dict[int, str]
    v2: np.ndarray


def merchants_read() -> Merchants:
    """``Merchants`` in one statement a run (a marketplace has far fewer merchants than
    open carts)."""
    rows = Merchant.objects.annotate(v2=merchant_has_warehouse(OuterRef("pk"))).values_list(
        "id", "name", "v2"
    )
    names: dict[int, str] = {}
    v2: list[int] = []
    for merchant_id, name, has_warehouse in rows:
        names[merchant_id] = name
        if has_warehouse:
            v2.append(merchant_id)
    return Merchants(names=names, v2=np.array(sorted(v2), np.int64))


def merchant_has_warehouse(merchant) -> Exists:
    return Exists(Warehouse.objects.filter(merchant_id=merchant, active=True))


def product_names_read(*, product_ids: Sequence[int]) -> dict[int, str]:
    """The names a chunk's notices show: one statement, none for no product."""
    ids = sorted({int(i) for i in product_ids})
    return dict(Product.objects.filter(id__in=ids).values_list("id", "name")) if ids else {}


def merchant_names_read(*, merchant_ids: Sequence[int]) -> dict[int, str]:
    """For a merchant created after the run read ``Merchants``: one statement."""
    ids = sorted({int(i) for i in merchant_ids})
    return dict(Merchant.objects.filter(id__in=ids).values_list("id", "name")) if ids else {}
