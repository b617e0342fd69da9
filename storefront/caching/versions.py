"""Version numbers of what the shared page cache holds, so entries are never deleted, only
orphaned: a cached fragment's key embeds the versions it was rendered under, and a writer
replaces a version once its transaction commits. The next reader builds a new key, misses,
renders from the database and stores under the new key; the old entry expires (TTL).

Three kinds of version, each a unique token kept in the shared cache:

- ``catalog``: everything a product *list* shows (home, category and search pages, the
  catalog API's lists): any product, offer, merchant or category change.
- ``shared``: what every product page shows beyond its own product: merchants (name, terms,
  activity), their shipping zones, categories.
- ``product:<id>``: one product and its offers (price, stock, activity, cheapest offer).

A reader takes the versions *before* it reads the database, so a commit that lands between its
read and its store only orphans what it stored. Tokens are unique (time and randomness), never
counters: a version evicted from the cache comes back as a new token, never as an old one.

With the cache down every function here degrades: versions read as ``None`` (the caller then
renders without caching) and bumps are skipped; the entries' TTL (``PAGE_CACHE_TTL``) bounds
what a cache that comes back after missing bumps can still serve.
"""

import logging
import os
import time
from collections.abc import Iterable

from django.conf import settings
from django.core.cache import cache

from storefront.caching.commit_once import on_commit_once

logger = logging.getLogger(__name__)

CATALOG = "catalog"
SHARED = "shared"
VERSION_KEY_PREFIX = "pv:"


def product_version_name(product_id: int) -> str:
    return f"product:{int(product_id)}"


def page_cache_enabled() -> bool:
    """``PAGE_CACHE`` (default on); off renders every fragment on every request."""
    return bool(getattr(settings, "PAGE_CACHE", True))


def page_cache_ttl() -> int:
    return int(getattr(settings, "PAGE_CACHE_TTL", 600))


def _new_token() -> str:
    return f"{time.time_ns():x}{os.urandom(4).hex()}"


def cache_versions_get(names: Iterable[str]) -> dict[str, str] | None:
    """The current token of each name (created when missing); ``None`` when the cache fails."""
    names = list(names)
    keys = {VERSION_KEY_PREFIX + name: name for name in names}
    try:
        found = cache.get_many(list(keys))
        for key in keys:
            if key not in found:
                # add(): concurrent first readers agree on one token.
                cache.add(key, _new_token(), timeout=None)
                found[key] = cache.get(key)
                if found[key] is None:
                    return None
    except Exception:  # the cache is down (CacheUnavailable, ConnectionError, ...)
        logger.warning("page cache: versions unavailable, rendering uncached", exc_info=True)
        return None
    return {name: found[key] for key, name in keys.items()}


def cache_versions_bump(*, names: Iterable[str]) -> None:
    """Replaces the tokens now (use ``cache_versions_bump_on_commit`` from writers)."""
    tokens = {VERSION_KEY_PREFIX + name: _new_token() for name in names}
    if not tokens:
        return
    try:
        cache.set_many(tokens, timeout=None)
    except Exception:
        logger.warning("page cache: version bump failed for %s", sorted(tokens), exc_info=True)


class _PendingBump:
    """The names one transaction changed; replaced once when it commits."""

    def __init__(self, block: object | None) -> None:
        self.block = block
        self.names: set[str] = set()

    def __call__(self) -> None:
        names, self.names = self.names, set()
        cache_versions_bump(names=names)


def cache_versions_bump_on_commit(
    *,
    product_ids: Iterable[int | None] = (),
    catalog: bool = False,
    shared: bool = False,
    using: str | None = None,
) -> None:
    """Records what a write changed; the versions are replaced once per transaction, when it
    commits (at once outside one; never for a rollback), however many writers inside it
    record names. Changing products implies the catalog (lists show them)."""
    names = {product_version_name(i) for i in product_ids if i is not None}
    if names or catalog:
        names.add(CATALOG)
    if shared:
        names.add(SHARED)
    if not names:
        return
    pending = on_commit_once(_PendingBump, _PendingBump, using=using)
    if pending is None:
        cache_versions_bump(names=names)
    else:
        pending.names |= names
