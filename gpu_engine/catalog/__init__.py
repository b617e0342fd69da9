"""Catalog accelerators (not cart solvers): the radix tree for postal-code rules and the
cheapest offer per product, each on the GPU when one is present, else on the CPU twin.

The names below are the apps' way in; nothing here touches CUDA at import time.
"""

from gpu_engine.catalog.cheapest_offer.select import (
    CheapestOffers,
    cheapest_offer_device,
    cheapest_offers,
    cheapest_offers_dense,
    cheapest_offers_warmup,
)
from gpu_engine.catalog.radix.codec import (
    PostalCodec,
    postal_codec_for,
    postal_normalize,
    postal_prefix_keys,
    postal_query_keys,
)
from gpu_engine.catalog.radix.tree import (
    RadixTree,
    radix_tree_build,
    radix_tree_device,
    radix_tree_lookup,
    radix_tree_match,
    radix_tree_warmup,
)

__all__ = [
    "CheapestOffers",
    "PostalCodec",
    "RadixTree",
    "cheapest_offer_device",
    "cheapest_offers",
    "cheapest_offers_dense",
    "cheapest_offers_warmup",
    "postal_codec_for",
    "postal_normalize",
    "postal_prefix_keys",
    "postal_query_keys",
    "radix_tree_build",
    "radix_tree_device",
    "radix_tree_lookup",
    "radix_tree_match",
    "radix_tree_warmup",
]
