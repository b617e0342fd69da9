"""Postal codes (and other short strings) as 64-bit radix tree keys with a bit length.

A code is normalised (upper case, spaces and hyphens removed) and its characters are packed
from the most significant bit down, ``bits_per_char`` bits each, below an optional integer
*namespace* field (for example the merchant id, so that one tree holds every merchant's zones):

    [ namespace : namespace_bits ][ char 1 ][ char 2 ] ... [ 0 padding ]

Characters map to codes starting at 1 ('0'..'9' -> 1..10, 'A'..'Z' -> 11..36), so the zero
padding after a string never equals a character: a rule (a prefix of ``k`` characters, length
``namespace_bits + k * bits_per_char`` bits) can only match a query that really continues with
those characters, and a plain LPM over the bits is exactly "longest postal prefix". The empty
prefix is the namespace's catch-all rule (length ``namespace_bits``).

``bits_per_char`` is 4 (digits only, 15 characters in 60 bits) or 6 (digits and letters).

Public API::

    PostalCodec(bits_per_char=6, namespace_bits=0)          the layout; ``max_chars``
    postal_codec_for(codes, *, namespace_bits=0) -> PostalCodec   4 bits if all digits, else 6
    postal_prefix_keys(codec, prefixes, *, namespaces=None) -> (keys uint64, lengths uint8)
        rules; a character outside the alphabet, or too many, raises ValueError
    postal_query_keys(codec, codes, *, namespaces=None) -> keys uint64
        destinations; they are read up to their first character outside the alphabet and
        truncated to ``max_chars`` (no rule can be longer, so the match is unchanged)
"""

from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np

_DIGITS = "0123456789"
_ALPHANUMERIC = _DIGITS + "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


class PostalCodec(NamedTuple):
    bits_per_char: int = 6
    namespace_bits: int = 0

    @property
    def alphabet(self) -> str:
        return _DIGITS if self.bits_per_char == 4 else _ALPHANUMERIC

    @property
    def max_chars(self) -> int:
        return (64 - self.namespace_bits) // self.bits_per_char


def postal_normalize(code: str) -> str:
    """Upper case, spaces and hyphens removed: "sw1a 1aa" -> "SW1A1AA"."""
    return code.upper().replace(" ", "").replace("-", "")


def postal_codec_for(codes: Iterable[str], *, namespace_bits: int = 0) -> PostalCodec:
    """The narrowest codec for these codes: 4 bits a character if all are digits, else 6."""
    digits_only = all(postal_normalize(c).isdigit() or not c.strip() for c in codes)
    return _checked(PostalCodec(4 if digits_only else 6, namespace_bits))


def postal_prefix_keys(codec: PostalCodec, prefixes: Sequence[str], *, namespaces=None):
    """(keys, lengths) of rules; raises ValueError on characters the codec cannot hold."""
    codec = _checked(codec)
    keys, lengths = _encode(codec, prefixes, namespaces, strict=True)
    return keys, lengths


def postal_query_keys(codec: PostalCodec, codes: Sequence[str], *, namespaces=None):
    """Keys of destinations (see the module docstring for how odd characters are read)."""
    codec = _checked(codec)
    return _encode(codec, codes, namespaces, strict=False)[0]


def _checked(codec: PostalCodec) -> PostalCodec:
    if codec.bits_per_char not in (4, 6):
        raise ValueError(f"bits_per_char must be 4 or 6, got {codec.bits_per_char}")
    if not 0 <= codec.namespace_bits <= 64 - codec.bits_per_char:
        raise ValueError(f"namespace_bits must leave room for a character: {codec.namespace_bits}")
    return codec


def _encode(codec, codes, namespaces, *, strict):
    n = len(codes)
    char_codes = {ch: i + 1 for i, ch in enumerate(codec.alphabet)}
    keys = np.zeros(n, np.uint64)
    lengths = np.zeros(n, np.uint8)
    names = _namespaces(codec, namespaces, n)
    top = 64 - codec.namespace_bits
    for row, code in enumerate(codes):
        text = postal_normalize(code)
        key = int(names[row]) << top if codec.namespace_bits else 0
        used = 0
        for ch in text:
            value = char_codes.get(ch)
            if value is None or used == codec.max_chars:
                if strict:
                    raise ValueError(f"postal prefix {code!r} does not fit the codec {codec}")
                break
            used += 1
            key |= value << (top - used * codec.bits_per_char)
        keys[row] = key
        lengths[row] = codec.namespace_bits + used * codec.bits_per_char
    return keys, lengths


def _namespaces(codec, namespaces, n):
    if codec.namespace_bits == 0:
        if namespaces is not None:
            raise ValueError("namespaces given but the codec has namespace_bits=0")
        return np.zeros(n, np.int64)
    if namespaces is None:
        raise ValueError("this codec needs a namespace (e.g. merchant id) per code")
    names = np.asarray(namespaces, dtype=np.int64)
    if names.shape != (n,):
        raise ValueError("one namespace per code")
    if n and (names.min() < 0 or names.max() >= 1 << codec.namespace_bits):
        raise ValueError(f"namespaces must be within 0..2**{codec.namespace_bits} - 1")
    return names
