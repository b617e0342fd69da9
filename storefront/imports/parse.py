"""Vectorised parsing of feed columns: one NumPy pass per column, never a Python loop per row.

Every parser takes a fixed-width unicode array (``numpy.str_``) and returns the values and a
``code`` array: 0 where the value is good, else one of the ``*_CODES`` keys, which
``storefront.imports.validate`` turns into row-by-row messages. Strings are read through their
UCS-4 code points (an ``(n, width)`` uint32 view), so "digits" means ASCII 0-9 only, the
way GS1 and our money fields mean it (``str.isdigit`` would accept "²" or Arabic-Indic digits).
"""

import numpy as np

# Longest value worth parsing per column; longer ones are refused before NumPy sees them, so
# one runaway cell cannot make a million-row array a million times wider.
MAX_NUMBER_CHARS = 32
MAX_GTIN_CHARS = 32
MAX_FLAG_CHARS = 16

GTIN_LENGTHS = (8, 12, 13, 14)
GTIN_MAX_DIGITS = 14

OK = 0
MISSING = 1
MALFORMED = 2
NEGATIVE = 3
TOO_MANY_DECIMALS = 4
TOO_LARGE = 5
GTIN_LENGTH = 6
GTIN_CHECK_DIGIT = 7

_ZERO, _NINE, _DOT, _MINUS = ord("0"), ord("9"), ord("."), ord("-")
# Integer digits past which a number certainly exceeds every limit (and int64).
_MAX_INTEGER_DIGITS = 15

TRUE_WORDS = ("1", "true", "t", "yes", "y")
FALSE_WORDS = ("0", "false", "f", "no", "n")


def fixed_width(values: list[str], *, max_chars: int) -> tuple[np.ndarray, np.ndarray]:
    """``values`` as a stripped ``str_`` array, and a mask of the values refused before NumPy
    sees them (emptied in the array; the caller reports them as malformed): those longer than
    ``max_chars``, and those holding a NUL, which NumPy strings cannot keep (a trailing one
    vanishes, so "5\\0" would read as "5")."""
    refused = np.fromiter(
        (len(v) > max_chars or "\0" in v for v in values), dtype=bool, count=len(values)
    )
    if refused.any():
        values = [("" if bad else v) for v, bad in zip(values, refused, strict=True)]
    array = np.array(values, dtype=np.str_) if values else np.empty(0, dtype="<U1")
    return np.strings.strip(array), refused


def _code_points(array: np.ndarray) -> np.ndarray:
    """``(n, width)`` uint32 code points, 0 past each string's end."""
    width = max(array.dtype.itemsize // 4, 1)
    return np.ascontiguousarray(array, dtype=f"<U{width}").view(np.uint32).reshape(-1, width)


def _is_digit(points: np.ndarray) -> np.ndarray:
    return (points >= _ZERO) & (points <= _NINE)


def gtin_parse(array: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """GTINs as uint64 GTIN-14 numbers (leading zeros carry no meaning, as in GS1).

    Spaces and dashes inside are dropped first (people paste them from labels). Codes:
    MISSING, MALFORMED (not digits), GTIN_LENGTH (not 8, 12, 13 or 14), GTIN_CHECK_DIGIT.
    """
    for separator in (" ", "-", "\t"):
        if np.strings.find(array, separator).max(initial=-1) >= 0:
            array = np.strings.replace(array, separator, "")
    n = array.size
    lengths = np.strings.str_len(array)
    points = _code_points(array)
    inside = np.arange(points.shape[1]) < lengths[:, None]
    all_digits = np.all(~inside | _is_digit(points), axis=1)
    code = np.full(n, OK, dtype=np.int8)
    code[~np.isin(lengths, GTIN_LENGTHS)] = GTIN_LENGTH
    code[~all_digits] = MALFORMED
    code[lengths == 0] = MISSING
    keys = np.zeros(n, dtype=np.uint64)
    weighted = np.zeros(n, dtype=np.int64)
    digits = np.where(inside & _is_digit(points), points - _ZERO, 0)[:, :GTIN_MAX_DIGITS]
    for column in range(digits.shape[1]):
        digit = digits[:, column].astype(np.uint64)
        within = column < lengths
        keys = np.where(within, keys * np.uint64(10) + digit, keys)
        # GS1 weights 3, 1, 3, ... counted from the digit next to the check digit.
        distance = lengths - 1 - column
        weight = np.where(distance % 2 == 1, 3, 1) * (within & (distance > 0))
        weighted += weight * digits[:, column]
    check = (10 - weighted % 10) % 10
    last = digits[np.arange(n), np.clip(lengths - 1, 0, GTIN_MAX_DIGITS - 1)] if n else check
    code[(code == OK) & (last != check)] = GTIN_CHECK_DIGIT
    keys[code != OK] = 0
    return keys, code


def decimal_parse(array: np.ndarray, *, decimals: int, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """Non-negative decimals like ``12``, ``12.5`` or ``0.99`` as integers scaled by
    ``10**decimals`` (``decimals=2``: cents). No sign, exponent, thousands separator or symbol.

    Codes: MISSING (empty), MALFORMED, NEGATIVE (a well-formed number after a minus sign),
    TOO_MANY_DECIMALS, TOO_LARGE (above ``limit`` once scaled).
    """
    negative = np.strings.startswith(array, "-")
    body = np.where(negative, np.strings.slice(array, 1, None), array)
    n = body.size
    lengths = np.strings.str_len(body)
    points = _code_points(body)
    inside = np.arange(points.shape[1]) < lengths[:, None]
    is_dot = (points == _DOT) & inside
    dots = is_dot.sum(axis=1)
    dot_at = np.where(dots == 1, np.argmax(is_dot, axis=1), lengths)
    fraction_digits = np.where(dots == 1, lengths - dot_at - 1, 0)
    well_formed = (
        np.all(~inside | _is_digit(points) | is_dot, axis=1)
        & (dots <= 1)
        & (dot_at >= 1)
        & ((dots == 0) | (fraction_digits >= 1))
    )
    integer = np.zeros(n, dtype=np.int64)
    fraction = np.zeros(n, dtype=np.int64)
    digits = np.where(inside & _is_digit(points), points - _ZERO, 0).astype(np.int64)
    for column in range(min(points.shape[1], _MAX_INTEGER_DIGITS)):
        integer = np.where(column < dot_at, integer * 10 + digits[:, column], integer)
    for place in range(1, decimals + 1):
        column = np.minimum(dot_at + place, points.shape[1] - 1)
        present = place <= fraction_digits
        digit = digits[np.arange(n), column] if n else fraction
        fraction = fraction * 10 + np.where(present, digit, 0)
    values = integer * 10**decimals + fraction

    code = np.full(n, OK, dtype=np.int8)
    code[well_formed & (values > limit)] = TOO_LARGE
    code[well_formed & (dot_at > _MAX_INTEGER_DIGITS)] = TOO_LARGE
    code[well_formed & (fraction_digits > decimals)] = TOO_MANY_DECIMALS
    code[well_formed & negative] = NEGATIVE
    code[~well_formed] = MALFORMED
    code[(lengths == 0) & ~negative] = MISSING
    values[code != OK] = 0
    return values, code


def _packed(array: np.ndarray, width: int) -> np.ndarray:
    """Strings of up to ``width`` ASCII characters, lower-cased, as one int64 each (8 bits a
    character), so that comparing against a few words is an integer ``isin``; others are -1.
    (``np.strings.lower`` costs ten times more on a million rows.)"""
    points = _code_points(array)
    lengths = np.strings.str_len(array)
    fits = (lengths <= width) & np.all(points < 128, axis=1)
    points = points[:, :width].astype(np.int64)
    points += np.where((points >= ord("A")) & (points <= ord("Z")), 32, 0)
    packed = np.zeros(array.size, dtype=np.int64)
    for column in range(points.shape[1]):
        packed |= points[:, column] << (8 * column)
    return np.where(fits, packed, -1)


def flag_parse(array: np.ndarray, *, default: bool) -> tuple[np.ndarray, np.ndarray]:
    """``true/false``, ``1/0``, ``yes/no``, ``y/n``, ``t/f`` in any case; empty: ``default``.
    Codes: MALFORMED for anything else."""
    width = max(map(len, (*TRUE_WORDS, *FALSE_WORDS)))
    words = _packed(array, width)
    truthy = np.isin(words, _packed(np.array(TRUE_WORDS), width))
    falsy = np.isin(words, _packed(np.array(FALSE_WORDS), width))
    empty = np.strings.str_len(array) == 0
    values = truthy | (empty & default)
    code = np.where(truthy | falsy | empty, OK, MALFORMED).astype(np.int8)
    return values, code


def has_control_characters(array: np.ndarray) -> np.ndarray:
    """Rows holding a control character (tabs, newlines, NUL, DEL): never part of a SKU."""
    points = _code_points(array)
    lengths = np.strings.str_len(array)
    inside = np.arange(points.shape[1]) < lengths[:, None]
    control = (points < 32) | ((points >= 127) & (points < 160))
    return np.any(control & inside, axis=1)
