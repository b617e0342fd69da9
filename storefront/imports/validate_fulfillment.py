"""The feed's optional fulfillment columns: ``warehouse``, ``weight_g`` and ``merchant``.

- ``merchant`` (a slug): a row naming another merchant than the import's is refused, so a
  merchant's staff uploading a file with someone else's rows gets them in the error report.
- ``warehouse`` (a warehouse name of the import's merchant): the row's ``stock`` is the
  offer's stock at that warehouse. A SKU may then be on one row per warehouse; those rows
  must agree on everything but the stock, and stand or fall together. A merchant that ships
  from warehouses (an active one) must name one on every row.
- ``weight_g`` (grams per unit, a whole number): the product's weight. An import uploaded by
  a merchant's staff may set it only where the catalog has none; rows giving one product
  several weights are refused.

Empty cells (or no column at all) leave all three out, as in feeds from before them.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from storefront.imports import parse
from storefront.models import MAX_WEIGHT_G

NONE = -1  # no warehouse, no weight given


@dataclass(frozen=True)
class FeedContext:
    """What the fulfillment checks need of the import's merchant and uploader."""

    merchant_slug: str = ""
    # The merchant's warehouses, by name.
    warehouses: Mapping[str, int] = field(default_factory=dict)
    # The merchant ships from warehouses: every row names one.
    warehouse_required: bool = False
    # Uploaded by the merchant's staff: weights only where the catalog has none.
    weights_locked: bool = False
    # product ids -> their stored weight in grams
    product_weights: Callable[[list[int]], Mapping[int, int]] | None = None


def _names(values: list[str], limit: int = 5) -> str:
    shown = ", ".join(f"'{value}'" for value in values[:limit])
    return shown + (f" and {len(values) - limit} more" if len(values) > limit else "")


def merchant_rows(check, context: FeedContext) -> None:
    if not any(check.table.columns["merchant"]):  # no such column: nothing to compare
        return
    cells = [value.strip() for value in check.table.columns["merchant"]]
    other = np.fromiter(
        (bool(cell) and cell != context.merchant_slug for cell in cells), bool, len(cells)
    )
    check.fail(
        other,
        "merchant",
        lambda row: (
            f"This row is for merchant {check.raw('merchant', row)}; this is the feed of "
            f"'{context.merchant_slug}', so it was not imported."
        ),
    )


def weights(check) -> np.ndarray:
    if not any(check.table.columns["weight_g"]):
        return np.full(check.n, NONE, dtype=np.int64)
    values, refused = parse.fixed_width(
        check.table.columns["weight_g"], max_chars=parse.MAX_NUMBER_CHARS
    )
    weight, code = parse.decimal_parse(values, decimals=0, limit=MAX_WEIGHT_G)
    weight[code == parse.MISSING] = NONE
    code[code == parse.MISSING] = parse.OK
    code[refused] = parse.MALFORMED

    def message(row: int) -> str:
        value, kind = check.raw("weight_g", row), code[row]
        if kind == parse.NEGATIVE:
            return f"The weight_g {value} is negative."
        if kind == parse.TOO_LARGE:
            return f"The weight_g {value} is too large (at most {MAX_WEIGHT_G} g a unit)."
        return f"The weight_g {value} is not a whole number of grams (leave it empty if unknown)."

    check.fail(code != parse.OK, "weight_g", message)
    return weight


def warehouses(check, context: FeedContext) -> tuple[np.ndarray, list[str]]:
    """Each row's warehouse id (NONE where empty) and the stripped names."""
    raw = check.table.columns["warehouse"]
    if any(raw):
        cells = [value.strip() for value in raw]
        ids = np.fromiter(
            (context.warehouses.get(cell, 0) if cell else NONE for cell in cells),
            np.int64,
            len(cells),
        )
    else:  # no such column (a feed from before warehouses): one pass less per row
        cells, ids = [""] * check.n, np.full(check.n, NONE, dtype=np.int64)
    known = sorted(context.warehouses)
    check.fail(
        ids == 0,
        "warehouse",
        lambda row: (
            f"No warehouse {check.raw('warehouse', row)} at this merchant"
            + (f"; its warehouses are {_names(known)}." if known else "; it has none.")
        ),
    )
    if context.warehouse_required:
        check.fail(
            ids == NONE,
            "warehouse",
            lambda row: (
                f"This merchant ships from its warehouses ({_names(known)}): name the "
                "warehouse this row's stock is at."
            ),
        )
    ids[ids == 0] = NONE
    return ids, cells


def duplicate_keys(check, names: list[str]) -> np.ndarray | None:
    """The key a row must be alone with: the SKU and, in a feed naming warehouses, the
    warehouse (a SKU may be on one row per warehouse). ``None`` for a feed without any."""
    if not any(names):
        return None
    # A unit separator cannot be in a valid SKU (control characters are refused).
    return np.strings.add(np.strings.add(check.sku_array, "\x1f"), np.array(names, dtype=np.str_))


def _groups(check, rows: np.ndarray) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for row in rows.tolist():
        sku = check.skus[row]
        if sku:
            groups.setdefault(sku, []).append(row)
    return groups


def sku_rows_agree(check, columns: Mapping[str, np.ndarray]) -> None:
    """Rows of one SKU (one per warehouse) must agree on everything but the stock."""
    for rows in _groups(check, np.flatnonzero(check.ok)).values():
        if len(rows) < 2:
            continue
        differing = [
            name for name, values in columns.items() if len(set(values[rows].tolist())) > 1
        ]
        if not differing:
            continue
        lines = ", ".join(str(int(check.table.lines[row])) for row in rows)
        check.fail(
            np.asarray(rows),
            "merchant_sku",
            lambda row, lines=lines, differing=differing: (
                f"Lines {lines} give the SKU '{check.skus[row]}' different "
                f"{', '.join(differing)}; its rows (one per warehouse) must agree on all "
                "but the stock, so none of them was imported."
            ),
        )


def sku_groups_fail_together(check) -> None:
    """A SKU's rows stand or fall together: an offer is imported whole or not at all."""
    named = np.strings.str_len(check.sku_array) > 0
    failed = np.unique(check.sku_array[~check.ok & named])
    if failed.size == 0:
        return
    check.fail(
        check.ok & named & np.isin(check.sku_array, failed),
        "merchant_sku",
        lambda row: (
            f"Another row of the SKU '{check.skus[row]}' failed; a SKU's rows are imported "
            "together, so this one was not imported either."
        ),
    )


def first_rows(check) -> np.ndarray:
    """The first valid row of each SKU: the one the offer is written from."""
    first = np.zeros(check.n, dtype=bool)
    rows = np.flatnonzero(check.ok)
    if rows.size:
        _, at = np.unique(check.sku_array[rows], return_index=True)
        first[rows[at]] = True
    return first


def weight_conflicts(
    check, product_id: np.ndarray, weight: np.ndarray, context: FeedContext
) -> None:
    rows = np.flatnonzero(check.ok & (weight != NONE))
    if rows.size == 0:
        return
    by_product: dict[int, set[int]] = {}
    for row in rows.tolist():
        by_product.setdefault(int(product_id[row]), set()).add(int(weight[row]))
    torn = {product for product, found in by_product.items() if len(found) > 1}
    check.fail(
        np.asarray([row for row in rows.tolist() if int(product_id[row]) in torn], np.int64),
        "weight_g",
        lambda row: (
            f"Rows give the product of GTIN {check.raw('gtin', row)} different weights; "
            "give it one."
        ),
    )
    if not context.weights_locked or context.product_weights is None:
        return
    stored = context.product_weights(sorted(by_product))
    locked = [
        row
        for row in rows.tolist()
        if check.ok[row] and stored.get(int(product_id[row]), 0) not in (0, int(weight[row]))
    ]
    check.fail(
        np.asarray(locked, dtype=np.int64),
        "weight_g",
        lambda row: (
            f"The catalog gives this product {stored[int(product_id[row])]} g; a merchant's "
            "feed sets a weight only where none is set. Leave weight_g empty or ask the "
            "marketplace to change it."
        ),
    )
