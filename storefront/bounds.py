"""Integers from a request, bounded to what the database stores: ids are signed 64-bit
integers (``BigAutoField``). The catalog's SQL compiled once per shape takes its values past
Django's lookups (which answer "no rows" for an out-of-range int), so a larger int reaches
the driver: SQLite raises OverflowError, PostgreSQL a DataError. Inputs are bounded here."""

DB_INT_MIN = -(2**63)
DB_INT_MAX = 2**63 - 1


def db_id(value: object) -> int | None:
    """``value`` as a row id (ASCII digits, 1 to ``DB_INT_MAX``), or None when it is not one."""
    text = str(value).strip()
    if not (text.isascii() and text.isdigit()) or len(text) > len(str(DB_INT_MAX)):
        return None
    number = int(text)
    return number if 1 <= number <= DB_INT_MAX else None
