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

import numpy as np

COLUMNS = ("gtin", "merchant_sku", "price", "price_cents", "stock", "active")
# The columns of a FeedTable: "price" holds either kind; ``price_in_cents`` says which.
FEED_FIELDS = ("gtin", "merchant_sku", "price", "stock", "active")
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
    expected = "gtin, merchant_sku, price (or price_cents), stock, active"
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


def _read_jsonl(text: str) -> FeedTable:
    gtin, sku, price, stock, active, lines, in_cents = [], [], [], [], [], [], []
    issues: list[RowIssue] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line:
            continue
        row = _jsonl_row(line, number, issues)
        if row is None:
            continue
        gtin.append(row[0])
        sku.append(row[1])
        price.append(row[2])
        stock.append(row[3])
        active.append(row[4])
        in_cents.append(row[5])
        lines.append(number)
    if not lines and not issues:
        raise FeedFormatError("The file is empty; a JSON Lines feed has one object per line.")
    columns = dict(zip(FEED_FIELDS, (gtin, sku, price, stock, active), strict=True))
    return FeedTable(
        columns=columns,
        lines=np.asarray(lines, dtype=np.int64),
        price_in_cents=np.asarray(in_cents, dtype=bool),
        issues=issues,
    )


def _jsonl_row(line: str, number: int, issues: list[RowIssue]):
    try:
        # Numbers stay the text they were written as: 12.99 must never pass through a float.
        obj = json.loads(line, parse_float=str, parse_int=str)
    except ValueError as error:
        issues.append(RowIssue(number, "row", f"Not valid JSON: {error.args[0]}."))
        return None
    if not isinstance(obj, dict):
        issues.append(RowIssue(number, "row", "Each line must be a JSON object."))
        return None
    sku = obj.get("merchant_sku")
    sku_text = _json_text(sku) or ""
    unknown = sorted(set(obj) - set(COLUMNS))
    if unknown:
        message = f"Unknown field(s) {', '.join(unknown)}."
        issues.append(RowIssue(number, unknown[0], message, sku_text))
        return None
    if "price" in obj and "price_cents" in obj:
        issues.append(RowIssue(number, "price", "Give price or price_cents, not both.", sku_text))
        return None
    in_cents = "price_cents" in obj
    values = []
    for name in ("gtin", "merchant_sku", "price_cents" if in_cents else "price", "stock",
                 "active"):  # fmt: skip
        text = _json_text(obj.get(name))
        if text is None:
            issues.append(
                RowIssue(number, name, "Must be a string, a number, true/false or null.", sku_text)
            )
            return None
        values.append(text)
    return (*values, in_cents)
