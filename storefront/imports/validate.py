"""Validation of a whole feed: field by field in NumPy, then the rules that span rows
(duplicate SKUs, one active SKU per product) and the ones that need the catalog (GTIN ->
product, a SKU never moving to another product).

Every failing row is reported with its line, SKU, field and a message a merchant can act on;
a row may fail several ways and gets one report line per failure.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from storefront.imports import parse
from storefront.imports import validate_fulfillment as fulfillment
from storefront.imports.feed import FeedTable
from storefront.imports.plan import MerchantOffers
from storefront.imports.resolve import AMBIGUOUS, UNKNOWN
from storefront.imports.validate_fulfillment import FeedContext
from storefront.models import MAX_MONEY_CENTS
from storefront.money import format_amount
from storefront.validators import gtin_check_digit, gtin_normalize

MAX_SKU_CHARS = 64
MAX_STOCK = 2_147_483_647  # PositiveIntegerField's range on every database Django supports
UNLIMITED = -1
_TOO_LONG = 100
_SKU_RUNAWAY_CHARS = 256
_LINES_SHOWN = 5


@dataclass
class RowErrors:
    lines: list[int] = field(default_factory=list)
    skus: list[str] = field(default_factory=list)
    fields: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)

    def add(self, *, line: int, sku: str, field: str, message: str) -> None:
        self.lines.append(int(line))
        self.skus.append(sku)
        self.fields.append(field)
        self.messages.append(message)

    def __len__(self) -> int:
        return len(self.lines)

    def sorted_rows(self) -> list[tuple[int, str, str, str]]:
        order = sorted(range(len(self)), key=lambda i: self.lines[i])
        return [(self.lines[i], self.skus[i], self.fields[i], self.messages[i]) for i in order]


@dataclass
class ValidatedFeed:
    """Per data row (file order): the parsed values and ``valid``; ``errors`` lists every
    failure, including rows whose structure kept them out of the arrays."""

    lines: np.ndarray
    sku: np.ndarray
    product_id: np.ndarray
    price: np.ndarray
    stock: np.ndarray
    active: np.ndarray
    valid: np.ndarray
    errors: RowErrors
    rows_total: int
    # The fulfillment columns (``validate_fulfillment.NONE`` where a row gives none) and the
    # rows offers are written from (the first valid row of each SKU).
    warehouse_id: np.ndarray
    weight: np.ndarray
    offer_row: np.ndarray

    @property
    def rows_valid(self) -> int:
        return int(self.valid.sum())

    @property
    def rows_failed(self) -> int:
        return self.rows_total - self.rows_valid


# product ids -> their GTINs, for messages
ProductGtins = Callable[[list[int]], Mapping[int, str]]
# GTIN-14 numbers -> product ids (or UNKNOWN / AMBIGUOUS)
GtinResolver = Callable[[np.ndarray], np.ndarray]


def _quote(value: str) -> str:
    return f"'{value}'" if len(value) <= 40 else f"'{value[:37]}...'"


def _lines_text(lines) -> str:
    shown = ", ".join(str(int(line)) for line in lines[:_LINES_SHOWN])
    return shown + (f" and {len(lines) - _LINES_SHOWN} more" if len(lines) > _LINES_SHOWN else "")


class _Checker:
    def __init__(self, table: FeedTable, *, decimals: int) -> None:
        self.table = table
        self.decimals = decimals
        self.n = len(table)
        self.ok = np.ones(self.n, dtype=bool)
        self.errors = RowErrors()
        for issue in table.issues:
            self.errors.add(
                line=issue.line, sku=issue.sku, field=issue.field, message=issue.message
            )
        skus = [value.strip() for value in table.columns["merchant_sku"]]
        self.sku_array, self._sku_refused = parse.fixed_width(skus, max_chars=_SKU_RUNAWAY_CHARS)
        self.skus = skus

    def fail(self, rows: np.ndarray, field_name: str, message: Callable[[int], str]) -> None:
        for row in np.flatnonzero(rows) if rows.dtype == bool else rows:
            self.errors.add(
                line=self.table.lines[row],
                sku=self.skus[row],
                field=field_name,
                message=message(int(row)),
            )
        self.ok[rows] = False

    def raw(self, name: str, row: int) -> str:
        return _quote(self.table.columns[name][row].strip())

    # --- single fields ------------------------------------------------------------------

    def gtin(self) -> np.ndarray:
        raw = self.table.columns["gtin"]
        values, refused = parse.fixed_width(raw, max_chars=parse.MAX_GTIN_CHARS)
        keys, code = parse.gtin_parse(values)
        code[refused] = parse.MALFORMED
        for row in np.flatnonzero(refused):
            if len(raw[row]) > parse.MAX_GTIN_CHARS:
                code[row] = _TOO_LONG

        def message(row: int) -> str:
            value, kind = self.raw("gtin", row), code[row]
            digits = gtin_normalize(self.table.columns["gtin"][row])
            if kind == parse.MISSING:
                return "The GTIN is missing."
            if kind == parse.GTIN_LENGTH:
                return f"GTIN {value} has {len(digits)} digits; a GTIN has 8, 12, 13 or 14."
            if kind == parse.GTIN_CHECK_DIGIT:
                expected = gtin_check_digit(digits[:-1])
                return f"GTIN {value} has a wrong check digit (expected {expected})."
            if kind == _TOO_LONG:
                return "The GTIN is far too long; a GTIN has 8 to 14 digits."
            return f"GTIN {value} must contain digits only."

        self.fail(code != parse.OK, "gtin", message)
        return keys

    def sku(self) -> None:
        lengths = np.strings.str_len(self.sku_array)
        with_nul = np.zeros(lengths.size, dtype=bool)
        for row in np.flatnonzero(self._sku_refused):
            with_nul[row] = "\0" in self.skus[row]
        too_long = (self._sku_refused & ~with_nul) | (lengths > MAX_SKU_CHARS)
        self.fail(
            (lengths == 0) & ~too_long & ~with_nul,
            "merchant_sku",
            lambda row: "The SKU is missing.",
        )
        self.fail(
            too_long,
            "merchant_sku",
            lambda row: f"The SKU is longer than {MAX_SKU_CHARS} characters.",
        )
        control = (parse.has_control_characters(self.sku_array) & ~too_long) | with_nul
        self.fail(
            control,
            "merchant_sku",
            lambda row: "The SKU contains control characters (a tab or line break?).",
        )

    def price(self) -> np.ndarray:
        values, refused = parse.fixed_width(
            self.table.columns["price"], max_chars=parse.MAX_NUMBER_CHARS
        )
        cents = self.table.price_in_cents
        price = np.zeros(self.n, dtype=np.int64)
        code = np.zeros(self.n, dtype=np.int8)
        for in_cents in (False, True):
            rows = cents == in_cents
            if rows.any():
                decimals = 0 if in_cents else self.decimals
                price[rows], code[rows] = parse.decimal_parse(
                    values[rows], decimals=decimals, limit=MAX_MONEY_CENTS
                )
        code[refused] = parse.MALFORMED
        maximum = format_amount(MAX_MONEY_CENTS)

        def message(row: int) -> str:
            value, kind = self.raw("price", row), code[row]
            name = "price_cents" if cents[row] else "price"
            if kind == parse.MISSING:
                return f"The {name} is missing."
            if kind == parse.NEGATIVE:
                return f"The {name} {value} is negative."
            if kind == parse.TOO_LARGE:
                return f"The {name} {value} is above the maximum of {maximum}."
            if kind == parse.TOO_MANY_DECIMALS:
                return (
                    f"The price_cents {value} must be a whole number of cents."
                    if cents[row]
                    else f"The price {value} has more than {self.decimals} decimals."
                )
            if cents[row]:
                return f"The price_cents {value} is not a whole number of cents like 1299."
            return (
                f"The price {value} is not a number like 12.99 (a dot for decimals; no "
                "currency symbol, sign or thousands separator)."
            )

        self.fail(code != parse.OK, "price", message)
        return price

    def stock(self) -> np.ndarray:
        values, refused = parse.fixed_width(
            self.table.columns["stock"], max_chars=parse.MAX_NUMBER_CHARS
        )
        stock, code = parse.decimal_parse(values, decimals=0, limit=MAX_STOCK)
        stock[code == parse.MISSING] = UNLIMITED
        code[code == parse.MISSING] = parse.OK
        code[refused] = parse.MALFORMED

        def message(row: int) -> str:
            value, kind = self.raw("stock", row), code[row]
            if kind == parse.NEGATIVE:
                return f"The stock {value} is negative; use 0 for sold out."
            if kind == parse.TOO_LARGE:
                return f"The stock {value} is too large (at most {MAX_STOCK})."
            return f"The stock {value} is not a whole number (leave it empty for unlimited)."

        self.fail(code != parse.OK, "stock", message)
        return stock

    def active(self) -> np.ndarray:
        values, refused = parse.fixed_width(
            self.table.columns["active"], max_chars=parse.MAX_FLAG_CHARS
        )
        active, code = parse.flag_parse(values, default=True)
        code[refused] = parse.MALFORMED
        self.fail(
            code != parse.OK,
            "active",
            lambda row: (
                f"Active {self.raw('active', row)} is not a flag; use true/false, "
                "1/0 or yes/no (empty: true)."
            ),
        )
        return active

    # --- rules across rows --------------------------------------------------------------

    def duplicate_skus(self, keys: np.ndarray | None = None) -> None:
        """A SKU is on one row (``keys``: one row per SKU and warehouse)."""
        named = np.flatnonzero(np.strings.str_len(self.sku_array) > 0)
        if named.size == 0:
            return
        per_warehouse = keys is not None
        keys = self.sku_array if keys is None else keys
        _, inverse, counts = np.unique(keys[named], return_inverse=True, return_counts=True)
        repeated = named[counts[inverse] > 1]
        if repeated.size == 0:
            return
        groups: dict[str, list[int]] = {}
        for row in repeated:
            groups.setdefault(str(keys[row]), []).append(int(self.table.lines[row]))
        where = " at one warehouse" if per_warehouse else ""
        self.fail(
            repeated,
            "merchant_sku",
            lambda row: (
                f"The SKU {_quote(self.skus[row])} is on "
                f"{len(groups[str(keys[row])])} rows{where} (lines "
                f"{_lines_text(groups[str(keys[row])])}); a SKU may appear once{where}, so "
                "none of them was imported."
            ),
        )

    def products(self, keys: np.ndarray, resolve: GtinResolver) -> np.ndarray:
        product_id = np.full(self.n, UNKNOWN, dtype=np.int64)
        known = np.flatnonzero(keys != 0)
        product_id[known] = resolve(keys[known])
        self.fail(
            (keys != 0) & (product_id == UNKNOWN),
            "gtin",
            lambda row: f"No product with GTIN {self.raw('gtin', row)} in the catalog.",
        )
        self.fail(
            product_id == AMBIGUOUS,
            "gtin",
            lambda row: (
                f"GTIN {self.raw('gtin', row)} matches several catalog products "
                "(the same number with different leading zeros); fix the catalog first."
            ),
        )
        return product_id

    def moved_skus(
        self, product_id: np.ndarray, snapshot: MerchantOffers, gtins: ProductGtins
    ) -> None:
        rows = np.flatnonzero(self.ok)
        at = snapshot.find(self.sku_array[rows])
        owner = np.where(at >= 0, snapshot.product_id[np.maximum(at, 0)], -1)
        moved = (owner != -1) & (owner != product_id[rows])
        if not moved.any():
            return
        owners = dict(zip(rows[moved].tolist(), owner[moved].tolist(), strict=True))
        owner_gtins = gtins(sorted(set(owners.values())))
        self.fail(
            rows[moved],
            "gtin",
            lambda row: (
                f"The SKU {_quote(self.skus[row])} is already this merchant's offer "
                f"for GTIN {owner_gtins.get(owners[row], '?')}; a SKU cannot move to another "
                "product. Use a new SKU (and set the old one inactive)."
            ),
        )

    def one_active_sku_per_product(
        self, product_id: np.ndarray, active: np.ndarray, first: np.ndarray
    ) -> None:
        """Counted by SKU (``first``: a SKU's first valid row; it may have one per warehouse)."""
        rows = np.flatnonzero(self.ok & active & first)
        if rows.size == 0:
            return
        _, inverse, counts = np.unique(product_id[rows], return_inverse=True, return_counts=True)
        clashing = rows[counts[inverse] > 1]
        if clashing.size == 0:
            return
        groups: dict[int, list[int]] = {}
        for row in clashing:
            groups.setdefault(int(product_id[row]), []).append(int(self.table.lines[row]))
        self.fail(
            clashing,
            "gtin",
            lambda row: (
                f"Lines {_lines_text(groups[int(product_id[row])])} give this product "
                "several active SKUs; a merchant sells a product through one active SKU, so none "
                "of them was imported. Set the others inactive."
            ),
        )


def _first_rows(check: _Checker, per_warehouse: np.ndarray | None) -> np.ndarray:
    # Without warehouses a valid SKU is on one row: every valid row is its SKU's first.
    return check.ok.copy() if per_warehouse is None else fulfillment.first_rows(check)


def feed_validate(
    table: FeedTable,
    *,
    decimals: int,
    resolve: GtinResolver,
    snapshot: MerchantOffers,
    product_gtins: ProductGtins,
    context: FeedContext | None = None,
) -> ValidatedFeed:
    """Every check of the feed; ``resolve`` maps GTIN-14 numbers to product ids in one call,
    ``snapshot`` holds the merchant's offers (a SKU may not move to another product),
    ``context`` the merchant's warehouses and who uploaded (``validate_fulfillment``)."""
    context = context or FeedContext()
    check = _Checker(table, decimals=decimals)
    keys = check.gtin()
    check.sku()
    price = check.price()
    stock = check.stock()
    active = check.active()
    fulfillment.merchant_rows(check, context)
    weight = fulfillment.weights(check)
    warehouse_id, warehouse_names = fulfillment.warehouses(check, context)
    per_warehouse = fulfillment.duplicate_keys(check, warehouse_names)
    check.duplicate_skus(per_warehouse)
    product_id = check.products(keys, resolve)
    if check.ok.any() and len(snapshot):
        check.moved_skus(product_id, snapshot, product_gtins)
    if per_warehouse is not None:  # a SKU may be on several rows: they go together
        fulfillment.sku_rows_agree(
            check, {"gtin": keys, "price": price, "active": active, "weight_g": weight}
        )
    fulfillment.weight_conflicts(check, product_id, weight, context)
    if per_warehouse is not None:
        fulfillment.sku_groups_fail_together(check)
    check.one_active_sku_per_product(product_id, active, _first_rows(check, per_warehouse))
    if per_warehouse is not None:
        fulfillment.sku_groups_fail_together(check)
    return ValidatedFeed(
        lines=table.lines,
        sku=check.sku_array,
        product_id=product_id,
        price=price,
        stock=stock,
        active=active,
        valid=check.ok,
        errors=check.errors,
        rows_total=table.rows_total,
        warehouse_id=warehouse_id,
        weight=weight,
        offer_row=_first_rows(check, per_warehouse),
    )
