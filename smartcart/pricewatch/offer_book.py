"""The offers of a price-watch run: every offer of the products its chunks have met, read once.

Neighbouring chunks share most of their products (100k carts over 20k products: each chunk
of 2,000 carts meets 8k of them), so reading each chunk's offers again read the same rows
dozens of times; the book reads a product's offers on the first chunk that meets it (one
statement a chunk, only for products it has not seen) and keeps them as columns sorted by
product. Names are kept the same way, read for the first notice that shows them, and the
shipping rule of each (merchant, destination), resolved for the first chunk that meets it.

The book is as fresh as the run: an offer (or a shipping rule) changed after it was read is
the next run's (the change is recorded, and a run removes only the changes it read). A cart
line whose offer the book does not hold (created after its product was read) is left to the
single-cart path, which reads it as it stands.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from django.db import connection
from django.db.models import Exists, OuterRef, Value

from smartcart.pricewatch.selectors import shipping_rules_known
from storefront.catalog.shipping import ShippingRule
from storefront.models import Merchant, Offer, Product, Warehouse

# Per offer: its id, product, merchant, unit price, stock (-1: unlimited), the merchant's
# discount minimum units and basis points (-1: none), whether the merchant ships from
# warehouses (0/1), whether it can be bought (offer and merchant active, 0/1).
BOOK_FIELDS = (
    "offer",
    "product",
    "merchant",
    "price",
    "stock",
    "dmin",
    "dbp",
    "v2",
    "buyable",
)
_WIDTH = len(BOOK_FIELDS)


@dataclass(frozen=True)
class Names:
    """Product and merchant names by id, and each as a JSON string once encoded."""

    products: dict[int, str]
    merchants: dict[int, str]
    products_json: dict[int, str] = field(default_factory=dict)
    merchants_json: dict[int, str] = field(default_factory=dict)


def _t(model) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def packed_columns(data: bytes | None, width: int) -> np.ndarray:
    """int64[width, rows] from a ``string_agg`` of ``int8send``-packed rows (``None``: none)."""
    if not data:
        return np.zeros((width, 0), np.int64)
    return np.frombuffer(data, ">i8").reshape(-1, width).T.astype(np.int64)


def _offers_sql() -> str:
    columns = (
        "o.id",
        "o.product_id",
        "o.merchant_id",
        "o.unit_price",
        "COALESCE(o.stock, -1)",
        "COALESCE(m.discount_min_units, -1)",
        "COALESCE(m.discount_basis_points, -1)",
        "(w.merchant_id IS NOT NULL)::int",
        "(o.active AND m.active)::int",
    )
    packed = " || ".join(f"int8send(({column})::bigint)" for column in columns)
    # One value for all the rows: the driver hands it over as one bytea (a COPY stream comes a
    # row at a time), read by one ``frombuffer``.
    return (
        f"SELECT string_agg({packed}, ''::bytea) FROM {_t(Offer)} o "
        f"JOIN {_t(Merchant)} m ON m.id = o.merchant_id "
        f"LEFT JOIN (SELECT DISTINCT merchant_id FROM {_t(Warehouse)} WHERE active) w "
        "ON w.merchant_id = o.merchant_id WHERE o.product_id = ANY(%s)"
    )


def _offers_read(products: list[int]) -> np.ndarray:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_offers_sql(), [products])
            row = cursor.fetchone()
        return packed_columns(None if row is None else row[0], _WIDTH)
    rows = (
        Offer.objects.filter(product_id__in=products)
        .annotate(
            v2=Exists(Warehouse.objects.filter(merchant_id=OuterRef("merchant_id"), active=True))
        )
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
            "active",
            "merchant__active",
        )
    )
    out = [
        (*r[:4], *(-1 if v is None else int(v) for v in r[4:7]), int(r[7]), int(r[8] and r[9]))
        for r in rows
    ]
    if not out:
        return np.zeros((_WIDTH, 0), np.int64)
    return np.array(out, np.int64).T.copy()


@dataclass
class OfferBook:
    """The offers read so far (``offers[k]``: column ``k`` of ``BOOK_FIELDS``, by product then
    id), the products they cover (sorted) and the names read so far."""

    offers: np.ndarray = field(default_factory=lambda: np.zeros((_WIDTH, 0), np.int64))
    products: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    names: Names = field(default_factory=lambda: Names(products={}, merchants={}))
    _by_id: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    _rules: dict[tuple[int, str], ShippingRule | None] = field(default_factory=dict)

    def column(self, name: str) -> np.ndarray:
        return self.offers[BOOK_FIELDS.index(name)]

    def cover(self, products: np.ndarray) -> None:
        """Reads the offers of the ``products`` not covered yet (one statement, if any)."""
        wanted = np.unique(products)
        new = wanted[~np.isin(wanted, self.products, assume_unique=True)]
        if not new.size:
            return
        read = _offers_read(new.tolist())
        offers = np.concatenate([self.offers, read], axis=1)
        self.offers = offers[:, np.lexsort((offers[0], offers[1]))]
        self.products = np.union1d(self.products, new)
        self._by_id = np.argsort(self.offers[0], kind="stable")

    def of_products(self, products: np.ndarray) -> np.ndarray:
        """Book positions of every offer of ``products`` (covered ones), by product."""
        wanted = np.unique(products)
        column = self.offers[1]
        lo = np.searchsorted(column, wanted, "left")
        counts = np.searchsorted(column, wanted, "right") - lo
        starts = np.repeat(lo - (np.cumsum(counts) - counts), counts)
        return starts + np.arange(int(counts.sum()))

    def find(self, offer_ids: np.ndarray) -> np.ndarray:
        """Book position of each offer id (-1: not in the book)."""
        ids = self.offers[0][self._by_id]
        if not ids.size:
            return np.full(offer_ids.size, -1, np.int64)
        at = np.minimum(np.searchsorted(ids, offer_ids), ids.size - 1)
        return np.where(ids[at] == offer_ids, self._by_id[at], -1)

    def shipping_rules(self, *, pairs: list[tuple[int, str]]) -> list[ShippingRule | None]:
        """``selectors.shipping_rules_known`` of each (merchant, destination), each pair
        resolved once a run (a chunk meets the same few hundred pairs as the one before)."""
        new = [pair for pair in dict.fromkeys(pairs) if pair not in self._rules]
        if new:
            self._rules.update(zip(new, shipping_rules_known(pairs=new), strict=True))
        return [self._rules[pair] for pair in pairs]

    def names_for(self, *, product_ids: Sequence[int], merchant_ids: Sequence[int]) -> Names:
        """The names of these products and merchants (the ones not read yet: one statement)."""
        products = sorted({int(i) for i in product_ids} - self.names.products.keys())
        merchants = sorted({int(i) for i in merchant_ids} - self.names.merchants.keys())
        if products or merchants:
            for kind, row_id, name in _names_rows(products, merchants):
                (self.names.merchants if kind else self.names.products)[row_id] = name
        return self.names


def _names_rows(products: list[int], merchants: list[int]):
    if connection.vendor == "postgresql":
        # One array parameter each: ``id__in`` writes a placeholder per id, and psycopg's
        # parsing of a statement with ten thousand of them cost more than running it.
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT 0, id, name FROM {_t(Product)} WHERE id = ANY(%s) UNION ALL "
                f"SELECT 1, id, name FROM {_t(Merchant)} WHERE id = ANY(%s)",
                [products, merchants],
            )
            return cursor.fetchall()
    return (
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
