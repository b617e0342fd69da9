import pytest
from django.core.exceptions import ValidationError
from hypothesis import given
from hypothesis import strategies as st

from storefront.validators import (
    gtin_check_digit,
    gtin_normalize,
    postal_code_normalize,
    postal_match_key,
    postal_prefix_normalize,
    validate_gtin,
    validate_postal_code,
    validate_postal_prefix,
)


@pytest.mark.parametrize(
    "gtin",
    [
        "4006381333931",  # EAN-13 printed on a Stabilo pen
        "96385074",  # GTIN-8
        "036000291452",  # UPC-A
        "10614141000415",  # GTIN-14 from GS1's examples
    ],
)
def test_real_gtins_are_accepted(gtin):
    validate_gtin(gtin)


def test_bad_check_digit_is_refused_with_the_expected_digit():
    with pytest.raises(ValidationError) as raised:
        validate_gtin("4006381333932")
    assert raised.value.code == "gtin_check_digit"
    assert "expected 1" in raised.value.messages[0]


@pytest.mark.parametrize("gtin", ["400638133393", "1234567", "123456789", "123456789012345"])
def test_lengths_other_than_8_12_13_14_are_refused(gtin):
    with pytest.raises(ValidationError) as raised:
        validate_gtin(gtin)
    assert raised.value.code in {"gtin_length", "gtin_check_digit"}


FULLWIDTH_GTIN = "".join(chr(ord(digit) + 0xFEE0) for digit in "4006381333931")


@pytest.mark.parametrize("gtin", ["40063813339a1", "", FULLWIDTH_GTIN])
def test_non_ascii_digits_are_refused(gtin):
    with pytest.raises(ValidationError) as raised:
        validate_gtin(gtin)
    assert raised.value.code == "gtin_not_digits"


@given(st.text(alphabet="0123456789", min_size=12, max_size=12))
def test_a_computed_check_digit_always_validates_and_any_other_never(payload):
    digit = gtin_check_digit(payload)
    validate_gtin(payload + str(digit))
    with pytest.raises(ValidationError):
        validate_gtin(payload + str((digit + 1) % 10))


def test_gtin_normalize_drops_separators():
    assert gtin_normalize(" 400-6381 333931 ") == "4006381333931"


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [(" sw1a  1aa ", "SW1A 1AA"), ("10115", "10115"), ("1234-567", "1234-567")],
)
def test_postal_codes_are_normalized_and_valid(raw, normalized):
    assert postal_code_normalize(raw) == normalized
    validate_postal_code(normalized)


@pytest.mark.parametrize("code", ["12", "12345678901", "-1234", "1234-", "12_45", "12#45", "ÄB123"])
def test_malformed_postal_codes_are_refused(code):
    with pytest.raises(ValidationError) as raised:
        validate_postal_code(postal_code_normalize(code))
    assert raised.value.code == "postal_code_invalid"


def test_match_key_ignores_case_spaces_and_dashes():
    assert postal_match_key("sw1a 1aa") == postal_match_key("SW1A-1AA") == "SW1A1AA"
    assert postal_match_key(None) == ""


def test_prefixes_are_normalized_and_may_be_empty():
    assert postal_prefix_normalize(" sw1 a") == "SW1A"
    validate_postal_prefix("")
    validate_postal_prefix("SW1A")
    with pytest.raises(ValidationError):
        validate_postal_prefix("SW 1")
    with pytest.raises(ValidationError):
        validate_postal_prefix("12345678901")
