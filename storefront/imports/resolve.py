"""GTIN -> product id for a whole feed in one batched lookup.

The catalog's GTINs are read once, turned into GTIN-14 numbers (uint64) and loaded into a
``gpu_engine`` radix tree (exact match, built on the GPU when a real one is present, else by
its numba CPU twin); the feed's GTINs are then looked up in a single call. GS1 treats a GTIN
and the same digits with leading zeros as one item, so ``012345678905`` (UPC-A) finds the
product stored as ``0012345678905`` (EAN-13). If two products share a number that way, the
GTIN is ambiguous and rows naming it are refused rather than guessed.
"""

from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import connection

from gpu_engine.catalog import RadixTree, radix_tree_build, radix_tree_lookup
from storefront.imports.parse import MAX_GTIN_CHARS, OK, fixed_width, gtin_parse
from storefront.models import Product

UNKNOWN = -1
AMBIGUOUS = -2


@dataclass(frozen=True)
class GtinIndex:
    tree: RadixTree
    products: int


def gtin_index_build() -> GtinIndex:
    """Every catalog product's GTIN in a radix tree: two columns read in one query."""
    table = connection.ops.quote_name(Product._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id, gtin FROM {table}")
        rows = cursor.fetchall()
    ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
    gtins, _ = fixed_width([row[1] for row in rows], max_chars=MAX_GTIN_CHARS)
    keys, code = gtin_parse(gtins)
    # Products saved before GTIN validation existed cannot match anything; skip them.
    keys, ids = keys[code == OK], ids[code == OK]
    unique, first, counts = np.unique(keys, return_index=True, return_counts=True)
    values = ids[first]
    values[counts > 1] = AMBIGUOUS
    # The import runs on the cpu queue, whose workers must never open a CUDA context.
    device = settings.OFFER_IMPORT_DEVICE
    tree = radix_tree_build(unique, values=values, device=device)
    return GtinIndex(tree=tree, products=len(rows))


def gtin_index_lookup(index: GtinIndex, keys: np.ndarray) -> np.ndarray:
    """Product id of each GTIN-14 number; UNKNOWN or AMBIGUOUS where there is none or several."""
    if keys.size == 0:
        return np.empty(0, dtype=np.int64)
    return np.asarray(radix_tree_lookup(index.tree, keys.astype(np.uint64)), dtype=np.int64)
