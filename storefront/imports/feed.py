"""Reading an offer feed (CSV or JSON Lines, optionally gzipped) into columns of strings.

Structure problems of a single row (a CSV row with the wrong number of fields, a JSON line
that is not an object) become row errors and the row is left out; problems of the whole file
(unknown encoding, a bad CSV header) raise ``FeedFormatError`` and nothing is imported.
"""

import csv
import gzip
import io
import json
from dataclasses import dataclass, field
from operator import itemgetter, methodcaller
from typing import cast

import numpy as np

# Fulfillment columns a feed may leave out entirely (older feeds have none of them):
# ``warehouse`` names the warehouse the row's stock is at, ``weight_g`` the product's weight
# and ``merchant`` the merchant the row is for (rows for another merchant are refused).
FULFILLMENT_COLUMNS = ("warehouse", "weight_g", "merchant")
COLUMNS = ("gtin", "merchant_sku", "price", "price_cents", "stock", "active", *FULFILLMENT_COLUMNS)
# The columns of a FeedTable: "price" holds either kind; ``price_in_cents`` says which.
FEED_FIELDS = ("gtin", "merchant_sku", "price", "stock", "active", *FULFILLMENT_COLUMNS)
REQUIRED = ("gtin", "merchant_sku")
PRICE_COLUMNS = ("price", "price_cents")
OPTIONAL = ("stock", "active")
DELIMITERS = (",", ";", "\t", "|")
_GZIP_MAGIC = b"\x1f\x8b"


class FeedFormatError(Exception):
    """The file as a whole cannot be read as a feed; the message says why, for people."""


@dataclass
class RowIssue:
    line: int
    field: str
    message: str
    sku: str = ""


@dataclass
class FeedTable:
    """Data rows in file order: ``columns[name][i]`` is row i's text for each of
    FEED_FIELDS ("" when empty or absent), ``lines[i]`` the file line it starts on and
    ``price_in_cents[i]`` whether its price came as ``price_cents`` (JSON Lines rows may mix
    the two). ``issues`` are the rows left out because their structure is broken."""

    columns: dict[str, list[str]]
    lines: np.ndarray
    price_in_cents: np.ndarray
    issues: list[RowIssue] = field(default_factory=list)

    def __len__(self) -> int:
        return int(self.lines.size)

    @property
    def rows_total(self) -> int:
        return len(self) + len(self.issues)


def feed_decode(data: bytes) -> str:
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as error:
            raise FeedFormatError(
                f"The file looks gzipped but cannot be unpacked: {error}."
            ) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise FeedFormatError(
            f"The file is not UTF-8 text (first bad byte on line {line}); save it as UTF-8."
        ) from None


def feed_read(data: bytes, *, format: str) -> FeedTable:
    text = feed_decode(data)
    if format == "csv":
        return _read_csv(text)
    if format == "jsonl":
        return _read_jsonl(text)
    raise FeedFormatError(f"Unknown feed format {format!r}; use csv or jsonl.")


# --- CSV ------------------------------------------------------------------------------------


def _header_names(cells: list[str]) -> list[str]:
    return [cell.strip().lower().lstrip("\ufeff") for cell in cells]


def _csv_delimiter(first_line: str) -> str:
    """The delimiter that splits the header into known column names (spreadsheets in many
    locales write ``;``); a comma when none does."""
    for delimiter in DELIMITERS:
        names = _header_names(next(csv.reader([first_line], delimiter=delimiter), []))
        if len(names) > 1 and set(names) <= set(COLUMNS):
            return delimiter
    return ","


def _check_header(names: list[str]) -> str:
    """Validates a CSV header; returns the price column it uses."""
    expected = (
        "gtin, merchant_sku, price (or price_cents), stock, active (and optionally "
        "warehouse, weight_g, merchant)"
    )
    if not any(names):
        raise FeedFormatError(f"The header row is empty; expected the columns {expected}.")
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise FeedFormatError(f"The header repeats column(s) {', '.join(duplicates)}.")
    unknown = [name or "(empty)" for name in names if name not in COLUMNS]
    if unknown:
        raise FeedFormatError(
            f"Unknown column(s) {', '.join(unknown)} in the header; expected {expected}. "
            "Columns are refused rather than ignored so that a misspelt one cannot silently "
            "leave its values out."
        )
    missing = [name for name in (*REQUIRED, *OPTIONAL) if name not in names]
    prices = [name for name in PRICE_COLUMNS if name in names]
    if not prices:
        missing.insert(2, "price (or price_cents)")
    if missing:
        raise FeedFormatError(f"The header lacks column(s) {', '.join(missing)}.")
    if len(prices) == 2:
        raise FeedFormatError("The header has both price and price_cents; use one of them.")
    return prices[0]


def _read_csv(text: str) -> FeedTable:
    if not text.strip():
        raise FeedFormatError("The file is empty; a CSV feed starts with a header row.")
    first_line, _, body = text.partition("\n")
    delimiter = _csv_delimiter(first_line)
    names = _header_names(next(csv.reader([first_line], delimiter=delimiter), []))
    price_column = _check_header(names)
    body = body.replace("\r\n", "\n")
    if '"' not in body and "\r" not in body:
        return _read_plain_csv(names, price_column, body, delimiter)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        next(reader)
        header_lines = reader.line_num
        records = list(reader)
    except csv.Error as error:
        raise FeedFormatError(
            f"The CSV is malformed near line {reader.line_num}: {error}."
        ) from None
    if reader.line_num == header_lines + len(records):
        # No record spans several lines: line numbers follow from positions.
        lines = np.arange(header_lines + 1, header_lines + 1 + len(records), dtype=np.int64)
    else:
        lines = _record_start_lines(text, delimiter)
    return _csv_table(names, price_column, records, lines)


def _read_plain_csv(names, price_column, body: str, delimiter: str) -> FeedTable:
    """A CSV body without quotes: every line is one record and splitting on the delimiter is
    exact, so it is split by ``str.split`` over the whole body (C speed, no per-row Python)."""
    lines = body.split("\n")
    if lines and not lines[-1]:
        lines.pop()
    width = len(names)
    fields = np.fromiter(map(methodcaller("count", delimiter), lines), np.int64, len(lines)) + 1
    blank = np.zeros(len(lines), dtype=bool)
    for i in np.flatnonzero(fields == 1):
        blank[i] = not lines[i].strip()
    good = (fields == width) & ~blank
    numbers = np.arange(2, len(lines) + 2, dtype=np.int64)
    issues = [
        _shape_issue(int(numbers[i]), lines[i].split(delimiter), names)
        for i in np.flatnonzero(~good & ~blank)
    ]
    kept = lines if good.all() else [line for line, ok in zip(lines, good, strict=True) if ok]
    flat = delimiter.join(kept).split(delimiter) if kept else []
    by_name = {name: flat[i::width] for i, name in enumerate(names)}
    return FeedTable(
        columns=_feed_columns(by_name, price_column, len(kept)),
        lines=numbers[good],
        price_in_cents=np.full(len(kept), price_column == "price_cents"),
        issues=issues,
    )


def _shape_issue(line: int, cells: list[str], names: list[str]) -> RowIssue:
    """A row with too few or too many fields; its SKU, if it has one where expected, helps
    the merchant find it."""
    at = names.index("merchant_sku")
    sku = cells[at].strip() if at < len(cells) else ""
    message = f"Expected {len(names)} fields, found {len(cells)}."
    return RowIssue(line=line, field="row", message=message, sku=sku)


def _feed_columns(by_name: dict[str, list[str]], price_column: str, rows: int):
    return {
        name: by_name.get(price_column if name == "price" else name, [""] * rows)
        for name in FEED_FIELDS
    }


def _record_start_lines(text: str, delimiter: str) -> np.ndarray:
    """The line each record starts on, when quoted fields hold line breaks."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    next(reader)
    starts = []
    previous_end = reader.line_num
    for _ in reader:
        starts.append(previous_end + 1)
        previous_end = reader.line_num
    return np.asarray(starts, dtype=np.int64)


def _csv_table(names, price_column, records, lines) -> FeedTable:
    width = len(names)
    keep = np.fromiter((len(record) == width for record in records), bool, len(records))
    issues = [
        _shape_issue(int(lines[index]), records[index], names)
        for index in np.flatnonzero(~keep)
        if any(cell.strip() for cell in records[index])  # blank lines are not rows
    ]
    if not keep.all():
        records = [record for record, kept in zip(records, keep, strict=True) if kept]
        lines = lines[keep]
    by_name = {name: list(map(itemgetter(i), records)) for i, name in enumerate(names)}
    return FeedTable(
        columns=_feed_columns(by_name, price_column, len(records)),
        lines=lines,
        price_in_cents=np.full(len(records), price_column == "price_cents"),
        issues=issues,
    )


# --- JSON Lines -----------------------------------------------------------------------------


def _json_text(value) -> str | None:
    """A JSON value as the feed text it stands for; None when no scalar fits."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    return None


def _json_loads(text: str):
    # Numbers stay the text they were written as: 12.99 must never pass through a float.
    return json.loads(text, parse_float=str, parse_int=str)


def _jsonl_objects(numbered: list[tuple[int, str]]) -> list:
    """Each line's JSON value, or the ValueError that line raised. The whole file is
    first parsed as one array (a single C call); only when some line is broken is it
    parsed line by line, to say which."""
    try:
        values = _json_loads("[" + ",".join(line for _, line in numbered) + "]")
    except ValueError:
        values = None
    if values is not None and len(values) == len(numbered):
        return values
    objects = []
    for _, line in numbered:
        try:
            objects.append(_json_loads(line))
        except ValueError as error:
            objects.append(error)
    return objects


def _read_jsonl(text: str) -> FeedTable:
    numbered = [
        (number, line)
        for number, raw in enumerate(text.split("\n"), start=1)
        if (line := raw.strip())
    ]
    if not numbered:
        raise FeedFormatError("The file is empty; a JSON Lines feed has one object per line.")
    objects = _jsonl_objects(numbered)
    numbers = np.fromiter((number for number, _ in numbered), np.int64, len(numbered))
    issues: list[RowIssue] = []
    ok = np.ones(len(objects), dtype=bool)
    for index, obj in enumerate(objects):
        # Column by column below; only odd rows take this per-row look.
        if (
            type(obj) is not dict
            or not obj.keys() <= _JSON_KEYS
            or ("price" in obj and "price_cents" in obj)
        ):
            issues.append(_jsonl_shape_issue(obj, int(numbers[index])))
            ok[index] = False
    if not ok.all():
        objects = [obj for obj, keep in zip(objects, ok, strict=True) if keep]
    in_cents = [("price_cents" in obj) for obj in objects]
    columns: dict[str, list[str | None]] = {}
    for name in FEED_FIELDS:
        values = [obj.get(name) for obj in objects]
        if name == "price":
            cents = [obj.get("price_cents") for obj in objects]
            values = [c if flag else v for v, c, flag in zip(values, cents, in_cents, strict=True)]
        columns[name] = [v if type(v) is str else _json_text(v) for v in values]
    kept_numbers = numbers[ok]
    odd = np.zeros(len(objects), dtype=bool)
    for name in FEED_FIELDS:
        for index in (i for i, v in enumerate(columns[name]) if v is None):
            if not odd[index]:
                shown = "price_cents" if name == "price" and in_cents[index] else name
                sku = _json_text(objects[index].get("merchant_sku")) or ""
                issues.append(RowIssue(int(kept_numbers[index]), shown, _NOT_SCALAR, sku))
            odd[index] = True
    if odd.any():
        keep = ~odd
        columns = {name: [v for v, k in zip(col, keep, strict=True) if k]
                   for name, col in columns.items()}  # fmt: skip
        in_cents = [flag for flag, k in zip(in_cents, keep, strict=True) if k]
        kept_numbers = kept_numbers[keep]
    issues.sort(key=lambda issue: issue.line)
    return FeedTable(
        # The only None values (odd, non-scalar cells) were in the rows dropped just above.
        columns=cast(dict[str, list[str]], columns),
        lines=kept_numbers,
        price_in_cents=np.asarray(in_cents, dtype=bool),
        issues=issues,
    )


_JSON_KEYS = frozenset(COLUMNS)
_NOT_SCALAR = "Must be a string, a number, true/false or null."


def _jsonl_shape_issue(obj, number: int) -> RowIssue:
    if isinstance(obj, ValueError):
        return RowIssue(number, "row", f"Not valid JSON: {obj.args[0]}.")
    if not isinstance(obj, dict):
        return RowIssue(number, "row", "Each line must be a JSON object.")
    sku = _json_text(obj.get("merchant_sku")) or ""
    unknown = sorted(obj.keys() - _JSON_KEYS)
    if unknown:
        return RowIssue(number, unknown[0], f"Unknown field(s) {', '.join(unknown)}.", sku)
    return RowIssue(number, "price", "Give price or price_cents, not both.", sku)
