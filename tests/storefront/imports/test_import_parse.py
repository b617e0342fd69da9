"""The vectorised feed parsers agree with plain, obviously-correct Python on any input."""

import re
from decimal import Decimal

import numpy as np
import pytest
from django.core.exceptions import ValidationError
from hypothesis import given
from hypothesis import strategies as st

from storefront.imports import parse
from storefront.validators import gtin_normalize, validate_gtin

_DECIMAL = re.compile(r"^[0-9]+(\.[0-9]+)?$")


def _array(values: list[str]) -> np.ndarray:
    array, refused = parse.fixed_width(values, max_chars=parse.MAX_NUMBER_CHARS)
    assert not refused.any()
    return array


def _decimal_parse(texts: list[str], **options):
    """As validation runs it: values refused before NumPy count as malformed."""
    array, refused = parse.fixed_width(texts, max_chars=parse.MAX_NUMBER_CHARS)
    values, codes = parse.decimal_parse(array, **options)
    codes[refused] = parse.MALFORMED
    return values, codes


def _reference_decimal(text: str, decimals: int, limit: int) -> tuple[int, int]:
    text = text.strip()
    if not text:
        return 0, parse.MISSING
    negative = text.startswith("-")
    body = text[1:] if negative else text
    if not _DECIMAL.match(body):
        return 0, parse.MALFORMED
    if negative:
        return 0, parse.NEGATIVE
    if "." in body and len(body.split(".")[1]) > decimals:
        return 0, parse.TOO_MANY_DECIMALS
    value = int(Decimal(body) * 10**decimals)
    return (0, parse.TOO_LARGE) if value > limit else (value, parse.OK)


number_text = st.one_of(
    st.from_regex(r"\A-?[0-9]{1,12}(\.[0-9]{0,4})?\Z"),
    st.text(alphabet="0123456789.-+e, €", max_size=12),
    st.text(max_size=8),
)


@pytest.mark.slow
@given(st.lists(number_text, max_size=30), st.sampled_from([0, 2, 3]))
def test_decimal_parse_matches_python_decimals(texts, decimals):
    texts = [t for t in texts if len(t) <= parse.MAX_NUMBER_CHARS]
    limit = 10**10
    values, codes = _decimal_parse(texts, decimals=decimals, limit=limit)
    expected = [_reference_decimal(t, decimals, limit) for t in texts]
    assert list(zip(values.tolist(), codes.tolist(), strict=True)) == expected


def test_decimal_parse_examples():
    texts = ["12.99", "12.9", "12", "0.05", "-1", "1,5", "12.", ".5", "1.999", "", "٣"]
    values, codes = parse.decimal_parse(_array(texts), decimals=2, limit=10**10)
    assert values.tolist() == [1299, 1290, 1200, 5, 0, 0, 0, 0, 0, 0, 0]
    assert codes.tolist() == [
        parse.OK,
        parse.OK,
        parse.OK,
        parse.OK,
        parse.NEGATIVE,
        parse.MALFORMED,
        parse.MALFORMED,
        parse.MALFORMED,
        parse.TOO_MANY_DECIMALS,
        parse.MISSING,
        parse.MALFORMED,  # an Arabic-Indic digit is a digit to Python, not to a price
    ]


def _reference_gtin(text: str) -> tuple[int, bool]:
    digits = gtin_normalize(text)
    try:
        validate_gtin(digits)
    except ValidationError:
        return 0, False
    return int(digits), True


gtin_text = st.one_of(
    st.from_regex(r"\A[0-9]{7,15}\Z"),
    st.from_regex(r"\A[0-9]{4}[ -][0-9]{4}[ -][0-9]{5}\Z"),
    st.text(alphabet="0123456789 -x", max_size=16),
)


@pytest.mark.slow
@given(st.lists(gtin_text, max_size=30))
def test_gtin_parse_agrees_with_the_model_validator(texts):
    array, refused = parse.fixed_width(texts, max_chars=parse.MAX_GTIN_CHARS)
    keys, codes = parse.gtin_parse(array)
    codes[refused] = parse.MALFORMED
    got = [(int(key), code == parse.OK) for key, code in zip(keys, codes, strict=True)]
    assert got == [_reference_gtin(text) for text in texts]


def test_gtin_parse_ignores_leading_zeros_like_gs1():
    array, _ = parse.fixed_width(["0012345678905", "012345678905"], max_chars=32)
    keys, codes = parse.gtin_parse(array)
    assert codes.tolist() == [parse.OK, parse.OK]
    assert keys[0] == keys[1] == 12345678905


def test_flags():
    words = ["true", "FALSE", "Yes", "n", "1", "0", "", "t", "maybe", "truest", "ja"]
    values, codes = parse.flag_parse(_array(words), default=True)
    assert values.tolist() == [True, False, True, False, True, False, True, True] + [False] * 3
    assert codes.tolist() == [parse.OK] * 8 + [parse.MALFORMED] * 3


def test_control_characters():
    array = np.array(["plain", "tab\there", "nul\x00x", "bell\x07", "ok-ü"])
    assert parse.has_control_characters(array).tolist() == [False, True, True, True, False]


def test_runaway_cells_and_nul_characters_are_refused_before_numpy_sees_them():
    array, refused = parse.fixed_width(["1.00", "9" * 10_000, "5\0", "\0"], max_chars=32)
    assert refused.tolist() == [False, True, True, True]
    assert array.dtype.itemsize <= 4 * 32
    # NumPy would have kept "5\0" as "5".
    assert _decimal_parse(["5\0"], decimals=0, limit=9)[1].tolist() == [parse.MALFORMED]
