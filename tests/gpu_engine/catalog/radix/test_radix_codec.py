"""Postal codes as radix tree keys, and zone resolution by longest prefix end to end."""

import numpy as np
import pytest

from gpu_engine.catalog.radix.codec import (
    PostalCodec,
    postal_codec_for,
    postal_normalize,
    postal_prefix_keys,
    postal_query_keys,
)
from gpu_engine.catalog.radix.tree import radix_tree_build, radix_tree_match


def test_normalize():
    assert postal_normalize(" sw1a 1aa") == "SW1A1AA"
    assert postal_normalize("1234-567") == "1234567"


def test_codec_choice():
    assert postal_codec_for(["10115", "8", ""]) == PostalCodec(4, 0)
    assert postal_codec_for(["10115", "SW1A"]) == PostalCodec(6, 0)
    assert PostalCodec(4).max_chars == 16
    assert PostalCodec(6, namespace_bits=20).max_chars == 7


def test_digits_pack_from_the_top_with_nonzero_codes():
    keys, lengths = postal_prefix_keys(PostalCodec(4), ["0", "10", ""])
    assert keys.tolist() == [1 << 60, (2 << 60) | (1 << 56), 0]
    assert lengths.tolist() == [4, 8, 0]


def test_namespace_field_sits_above_the_characters():
    codec = PostalCodec(6, namespace_bits=16)
    keys, lengths = postal_prefix_keys(codec, ["", "A"], namespaces=[3, 3])
    assert keys.tolist() == [3 << 48, (3 << 48) | (11 << 42)]
    assert lengths.tolist() == [16, 22]


def test_rules_that_do_not_fit_are_refused():
    with pytest.raises(ValueError, match="does not fit"):
        postal_prefix_keys(PostalCodec(4), ["12A"])
    with pytest.raises(ValueError, match="does not fit"):
        postal_prefix_keys(PostalCodec(6), ["ABCDEFGHIJK"])
    with pytest.raises(ValueError, match="namespace"):
        postal_prefix_keys(PostalCodec(6, namespace_bits=8), ["A"])
    with pytest.raises(ValueError, match="within"):
        postal_prefix_keys(PostalCodec(6, namespace_bits=8), ["A"], namespaces=[256])


def test_queries_stop_at_odd_characters_and_truncate():
    codec = PostalCodec(4)
    assert postal_query_keys(codec, ["12X4"]).tolist() == postal_query_keys(codec, ["12"]).tolist()
    long = "1" * 20
    assert (
        postal_query_keys(codec, [long]).tolist() == postal_query_keys(codec, [long[:16]]).tolist()
    )


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_zone_resolution_by_longest_postal_prefix(device):
    prefixes = ["", "1", "10", "101", "1012", "8"]
    zones = [100, 101, 102, 103, 104, 105]
    codec = postal_codec_for(prefixes)
    keys, lengths = postal_prefix_keys(codec, prefixes)
    tree = radix_tree_build(keys, lengths=lengths, values=zones, device=device)
    destinations = ["10115", "1012", "10", "1", "2", "80331", "101", "1000"]
    got = radix_tree_match(tree, postal_query_keys(codec, destinations))
    # "10115" must not match "1012" even though the codes share digits, and "101" is matched
    # whole; the query padding never looks like a digit.
    np.testing.assert_array_equal(got, [103, 104, 102, 101, 100, 105, 103, 102])


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_zones_of_many_merchants_in_one_tree(device):
    codec = PostalCodec(6, namespace_bits=20)
    merchants = [1, 1, 2, 2]
    prefixes = ["", "SW1", "", "SW"]
    keys, lengths = postal_prefix_keys(codec, prefixes, namespaces=merchants)
    tree = radix_tree_build(keys, lengths=lengths, values=[10, 11, 20, 21], device=device)
    queries = postal_query_keys(
        codec, ["sw1a 1aa", "E1 6AN", "SW1A", "SE1"], namespaces=[1, 1, 2, 3]
    )
    np.testing.assert_array_equal(radix_tree_match(tree, queries), [11, 10, 21, -1])
