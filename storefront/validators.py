"""Validation and normalisation of GTINs and postal codes.

The normalisers are shared by model ``clean()``, services and (later) the API and the
offer-feed import, so that a value is spelled one way everywhere it is stored or compared.
"""

import re

from django.core.exceptions import ValidationError

# GTIN-8, GTIN-12 (UPC-A), GTIN-13 (EAN-13) and GTIN-14: the lengths GS1 defines.
GTIN_LENGTHS = (8, 12, 13, 14)
POSTAL_CODE_MIN_LENGTH = 3
POSTAL_CODE_MAX_LENGTH = 10
POSTAL_PREFIX_MAX_LENGTH = POSTAL_CODE_MAX_LENGTH

_POSTAL_CODE_RE = re.compile(r"^[A-Z0-9][A-Z0-9 -]*[A-Z0-9]$")
_POSTAL_PREFIX_RE = re.compile(r"^[A-Z0-9]*$")
_SEPARATORS_RE = re.compile(r"[\s-]+")


def gtin_check_digit(payload: str) -> int:
    """The GS1 mod-10 check digit for ``payload`` (the GTIN without its last digit).

    Weights alternate 3, 1, ... starting from the digit next to the check digit, which is
    what makes the same rule work for every GTIN length.
    """
    total = sum(
        int(digit) * (3 if index % 2 == 0 else 1) for index, digit in enumerate(reversed(payload))
    )
    return (10 - total % 10) % 10


def gtin_normalize(value: str) -> str:
    """Drops the spaces and dashes people paste from labels; digits are left as they are."""
    return _SEPARATORS_RE.sub("", str(value).strip())


def validate_gtin(value: str) -> None:
    """Refuses anything but an 8, 12, 13 or 14 digit GTIN with a correct check digit."""
    if not value.isascii() or not value.isdigit():
        raise ValidationError(
            "GTIN %(value)s must contain digits only.",
            code="gtin_not_digits",
            params={"value": value},
        )
    if len(value) not in GTIN_LENGTHS:
        raise ValidationError(
            "GTIN %(value)s has %(length)d digits; a GTIN has 8, 12, 13 or 14.",
            code="gtin_length",
            params={"value": value, "length": len(value)},
        )
    expected = gtin_check_digit(value[:-1])
    if int(value[-1]) != expected:
        raise ValidationError(
            "GTIN %(value)s has check digit %(actual)s, expected %(expected)d.",
            code="gtin_check_digit",
            params={"value": value, "actual": value[-1], "expected": expected},
        )


def postal_code_normalize(value: str) -> str:
    """Upper-case, trimmed, inner whitespace collapsed: ``" sw1a  1aa"`` -> ``"SW1A 1AA"``."""
    return " ".join(str(value).split()).upper()


def validate_postal_code(value: str) -> None:
    """A normalised postal code: 3-10 letters, digits, spaces or dashes; alphanumeric ends."""
    if not (POSTAL_CODE_MIN_LENGTH <= len(value) <= POSTAL_CODE_MAX_LENGTH) or not (
        value.isascii() and _POSTAL_CODE_RE.match(value)
    ):
        raise ValidationError(
            "Postal code %(value)s is not valid: use 3 to 10 letters, digits, spaces or dashes.",
            code="postal_code_invalid",
            params={"value": value},
        )


def postal_match_key(value: str | None) -> str:
    """The form zone prefixes are compared in: upper-case, no spaces or dashes.

    ``"SW1A 1AA"`` and ``"sw1a1aa"`` must fall in the same zone, so separators never matter.
    """
    if not value:
        return ""
    return _SEPARATORS_RE.sub("", str(value)).upper()


def postal_prefix_normalize(value: str) -> str:
    return postal_match_key(value)


def validate_postal_prefix(value: str) -> None:
    """A normalised zone prefix: empty (everywhere) or up to 10 letters and digits."""
    if len(value) > POSTAL_PREFIX_MAX_LENGTH or not (
        value.isascii() and _POSTAL_PREFIX_RE.match(value)
    ):
        raise ValidationError(
            "Postal prefix %(value)s is not valid: use up to 10 letters and digits, "
            "or leave it empty for everywhere.",
            code="postal_prefix_invalid",
            params={"value": value},
        )
