"""Every merchant's shipping zones in one longest-prefix-match radix tree, for resolving the
shipping rules of many (merchant, destination) pairs at once (pricing many carts).

The rules are the ones ``storefront.catalog.shipping.shipping_rule_resolve`` picks: the
merchant's zone with the longest postal prefix the normalised destination starts with
(``""`` = everywhere), else the merchant's defaults. Here each zone is a rule of
``gpu_engine.catalog.radix.tree``:

    key    = [ merchant namespace ][ prefix characters ]   (``gpu_engine.catalog.radix.codec``)
    length = namespace bits + characters * bits per character
    value  = index into ``ZoneIndex.rules``

The namespace is the merchant's position in ``ZoneIndex.merchant_ids`` (dense, so it takes
``log2(merchants)`` bits, not the bits of the largest id). Postal prefixes are at most 10
characters; when the namespace and the longest prefix do not fit 64 bits together, the
merchants are split into shards of ``2 ** namespace_bits`` and each shard gets its own tree
(one batched match per shard; one tree, so one call, in every realistic case).

Devices: ``STOREFRONT_ZONE_INDEX_DEVICE`` (default ``"cpu"``) is where the tree is built and
matched. The CPU twin is the default because the callers are web processes and ``cpu``
workers, which must hold no CUDA context (GPU memory per process, and asking whether a GPU is
present costs about 0.6 s on a first request); ``"auto"`` (a real GPU when present, never
Numba's CUDA simulator) or ``"gpu"`` suit a ``gpu`` worker pricing many carts. The thread-to-
data mapping is the tree's (one thread per query in ``radix_tree_match``, see
``gpu_engine.catalog.radix.tree``). A process builds its index on first use, never at import.

Freshness: ``zone_index_current()`` keeps one index per process, tagged with a version stamp
read from Django's cache (the shared Redis cache in production). Saving or deleting a
``ShippingZone`` or a ``Merchant`` through the ORM replaces the stamp once the transaction
commits, once per transaction (in ``offers_changed``'s call: for zones and terms, and from the
receiver ``merchant_changed`` of ``storefront.catalog.offer_changes`` for merchants that come or
go), and every process rebuilds on its next call.
``QuerySet.update()``, ``bulk_create()`` and raw SQL send no signals: code that writes zones or
merchants that way calls ``zone_index_invalidate()``.

Prefixes that are not valid normalised prefixes (``validate_postal_prefix``: upper-case ASCII
letters and digits, which every form and service stores) cannot match a normalised destination
made of such characters; they are left out of the tree.
"""

import logging
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.core.cache import cache

from gpu_engine.catalog import (
    PostalCodec,
    RadixTree,
    postal_codec_for,
    postal_prefix_keys,
    postal_query_keys,
    radix_tree_build,
    radix_tree_match,
)
from storefront.catalog.shipping import ShippingRule
from storefront.validators import postal_match_key

VERSION_CACHE_KEY = "storefront:zone_index:version"

_PREFIX_ALPHABET = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")


@dataclass(frozen=True)
class _Shard:
    codec: PostalCodec
    tree: RadixTree | None  # None when the shard's merchants have no zones


@dataclass(frozen=True)
class ZoneIndex:
    """Read-only. ``merchant_ids`` sorted; ``rules[i]`` for ``i < len(merchant_ids)`` is
    merchant ``merchant_ids[i]``'s defaults, the zone rules follow."""

    version: str
    merchant_ids: np.ndarray
    rules: tuple[ShippingRule, ...]
    shard_size: int
    shards: tuple[_Shard, ...]

    @property
    def zone_count(self) -> int:
        return len(self.rules) - self.merchant_ids.size

    def resolve(self, *, pairs: Sequence[tuple[int, str | None]]) -> list[ShippingRule | None]:
        """The rule of each (merchant id, postal code); ``None`` for an unknown merchant id."""
        n = len(pairs)
        if n == 0:
            return []
        wanted = np.fromiter((int(merchant_id) for merchant_id, _ in pairs), np.int64, n)
        dense = np.searchsorted(self.merchant_ids, wanted)
        known = dense < self.merchant_ids.size
        known[known] = self.merchant_ids[dense[known]] == wanted[known]
        dense = np.where(known, dense, -1)
        codes = [postal_match_key(code) for _, code in pairs]
        matched = self._match(dense, codes)
        return [
            None if d < 0 else self.rules[m if m >= 0 else d]
            for d, m in zip(dense.tolist(), matched.tolist(), strict=True)
        ]

    def _match(self, dense: np.ndarray, codes: list[str]) -> np.ndarray:
        matched = np.full(dense.size, -1, np.int64)
        shard_of = np.where(dense >= 0, dense // self.shard_size, -1)
        for number, shard in enumerate(self.shards):
            rows = np.flatnonzero(shard_of == number)
            if shard.tree is None or rows.size == 0:
                continue
            names = dense[rows] % self.shard_size if shard.codec.namespace_bits else None
            keys = postal_query_keys(shard.codec, [codes[row] for row in rows], namespaces=names)
            matched[rows] = np.asarray(radix_tree_match(shard.tree, keys), np.int64)
        return matched


def zone_index_build(*, version: str = "", device: str | None = None) -> ZoneIndex:
    """Reads every merchant and every zone (two queries) and builds the index.

    Inactive merchants are included: ``shipping_rules_for_destination`` resolves their rules
    too (whether they may sell is the caller's decision), and the index must agree with it.
    ``device``: None reads ``STOREFRONT_ZONE_INDEX_DEVICE``.
    """
    from storefront.models import Merchant, ShippingZone

    merchants = list(
        Merchant.objects.order_by("pk").values_list("pk", "base_fee", "per_extra_unit", "free_over")
    )
    merchant_ids = np.fromiter((row[0] for row in merchants), np.int64, len(merchants))
    rules = [ShippingRule(base_fee=b, per_extra_unit=p, free_over=f) for _, b, p, f in merchants]
    zones = ShippingZone.objects.order_by("merchant_id", "postal_prefix").values_list(
        "merchant_id", "postal_prefix", "base_fee", "per_extra_unit", "free_over"
    )
    # A merchant created between the two queries is missing from the first; its commit has
    # replaced the stamp, so the next call rebuilds with it.
    known = set(merchant_ids.tolist())
    indexed = [row for row in zones if row[0] in known and _indexable(row[1])]
    dense = np.searchsorted(merchant_ids, [row[0] for row in indexed]).astype(np.int64)
    rules += [
        ShippingRule(base_fee=b, per_extra_unit=p, free_over=f, zone_prefix=prefix)
        for _, prefix, b, p, f in indexed
    ]
    prefixes = [row[1] for row in indexed]
    device = device or settings.STOREFRONT_ZONE_INDEX_DEVICE
    shard_size, shards = _shards(merchant_ids.size, dense, prefixes, device)
    return ZoneIndex(
        version=version,
        merchant_ids=merchant_ids,
        rules=tuple(rules),
        shard_size=shard_size,
        shards=shards,
    )


def _indexable(prefix: str) -> bool:
    return len(prefix) <= 10 and all(ch in _PREFIX_ALPHABET for ch in prefix)


def _shards(n_merchants: int, dense: np.ndarray, prefixes: list[str], device: str):
    codec = postal_codec_for(prefixes)
    longest = max((len(prefix) for prefix in prefixes), default=0)
    needed = max(n_merchants - 1, 0).bit_length()
    room = 64 - max(longest, 1) * codec.bits_per_char
    namespace_bits = min(needed, room)
    codec = PostalCodec(codec.bits_per_char, namespace_bits)
    shard_size = 1 << namespace_bits
    first_zone = n_merchants  # zone i is rule n_merchants + i
    shards = []
    for start in range(0, max(n_merchants, 1), shard_size):
        rows = np.flatnonzero((dense >= start) & (dense < start + shard_size))
        tree = None
        if rows.size:
            names = dense[rows] - start if namespace_bits else None
            keys, lengths = postal_prefix_keys(
                codec, [prefixes[row] for row in rows], namespaces=names
            )
            tree = radix_tree_build(
                keys, lengths=lengths, values=first_zone + rows.astype(np.int64), device=device
            )
        shards.append(_Shard(codec=codec, tree=tree))
    return shard_size, tuple(shards)


# --- the per-process index and its version stamp --------------------------------------------

_lock = threading.Lock()
_current: ZoneIndex | None = None
_stamp_pending = False


def zone_index_version() -> str:
    """The shared stamp; a missing one (evicted, first start) is created, which forces a
    rebuild everywhere: never wrong, only a little work."""
    global _stamp_pending
    if _stamp_pending:  # a change committed while the cache was down
        cache.set(VERSION_CACHE_KEY, uuid.uuid4().hex, timeout=None)
        _stamp_pending = False
    version = cache.get(VERSION_CACHE_KEY)
    if version is None:
        cache.add(VERSION_CACHE_KEY, uuid.uuid4().hex, timeout=None)
        version = cache.get(VERSION_CACHE_KEY)
    return version


def zone_index_current() -> ZoneIndex:
    """This process's index, rebuilt when the shared stamp changed (no query when fresh).

    The stamp is read before the rows, so a change committed during a rebuild leaves a newer
    stamp behind and the next call rebuilds again.
    """
    global _current
    version = zone_index_version()
    index = _current
    if index is not None and index.version == version:
        return index
    with _lock:
        if _current is None or _current.version != version:
            _current = zone_index_build(version=version)
        return _current


def zone_index_invalidate() -> None:
    """Replace the stamp now (call ``on_commit`` of the writes it covers).

    With the cache down the write has committed already: every process resolves zones in SQL
    until the cache answers again (the selectors), and this process replaces the stamp on its
    first lookup after that, so no process keeps an index from before the write."""
    global _current, _stamp_pending
    from storefront.caching.cache import CacheUnavailable

    try:
        cache.set(VERSION_CACHE_KEY, uuid.uuid4().hex, timeout=None)
    except CacheUnavailable:
        logging.getLogger(__name__).warning("Zone index stamp not replaced: the cache is down")
        with _lock:
            _current, _stamp_pending = None, True


def zone_index_warmup(*, device: str | None = None) -> None:
    """Compiles (or loads from Numba's on-disk cache) every kernel a request's zone lookup
    reaches, with the argument types real indexes use: an index of a few made-up merchants and
    zones built and matched in memory (no query: it runs before the server accepts requests,
    ``smartcart.warmup``)."""
    device = device or settings.STOREFRONT_ZONE_INDEX_DEVICE
    prefixes = ["", "1", "10", "75", "SW1"]
    dense = np.array([0, 0, 1, 2, 2], np.int64)
    shard_size, shards = _shards(3, dense, prefixes, device)
    rule = ShippingRule(base_fee=0, per_extra_unit=0, free_over=None)
    index = ZoneIndex(
        version="warmup",
        merchant_ids=np.array([1, 2, 3], np.int64),
        rules=(rule,) * (3 + len(prefixes)),
        shard_size=shard_size,
        shards=shards,
    )
    index.resolve(pairs=[(1, "10115"), (2, "75001"), (3, "SW1A 1AA"), (4, None)])
