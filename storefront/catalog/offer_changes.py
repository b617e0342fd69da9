"""``offers_changed``: the signal other apps listen to when what a cart could cost moved.

Sent once per committed transaction that changed offers (price, stock, active, product),
a merchant's terms (shipping, discount, active) or a merchant's shipping zones, with the ids
of the products and merchants concerned. Every writer calls ``offers_changed_notify``: the
model receivers (``storefront.catalog.receivers``) for ORM saves and deletes, the admin's bulk
actions, the feed import once per import (``offers_changed_deferred``: its batches commit
one by one, and each would otherwise ask the listeners for a run of its own). Nothing is sent
for a transaction that rolls back.

The storefront never imports its listeners (``smartcart`` re-optimises open carts on it).
Receivers run after the commit (``robust``: a failing receiver is logged, the write stands)
and get ``product_ids`` and ``merchant_ids`` as frozensets of ints.
"""

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from django.db.models.signals import post_delete, post_save
from django.dispatch import Signal, receiver

from storefront.caching.commit_once import on_commit_once
from storefront.caching.versions import cache_versions_bump_on_commit

offers_changed = Signal()


class _PendingChanges:
    """The ids a transaction changed so far; called once on commit to send the signal."""

    def __init__(self, block: object | None) -> None:
        self.block = block
        self.product_ids: set[int] = set()
        self.merchant_ids: set[int] = set()
        # A merchant came or went (``zone_index_replace_on_commit``): the zone index is stale
        # even when no terms or zones of a merchant still there changed.
        self.zone_index = False

    def __call__(self) -> None:
        from storefront.catalog.zone_index import zone_index_invalidate
        from storefront.models import Offer

        if self.merchant_ids or self.zone_index:
            # Listeners may price carts with the zone index right away: its stamp is replaced
            # here, before they run, and only here (the zone index's receivers record into
            # this object), so once per transaction: a merchant deleted with its zones is
            # both a merchant gone and zones gone.
            zone_index_invalidate()
        if not self.product_ids and not self.merchant_ids:
            return  # only the stamp was asked for: a merchant came or went, nothing else
        offers_changed.send(
            sender=Offer,
            product_ids=frozenset(self.product_ids),
            merchant_ids=frozenset(self.merchant_ids),
        )


def _ids(values: Iterable[int | None]) -> set[int]:
    return {int(value) for value in values if value is not None}


def offers_changed_notify(
    *,
    product_ids: Iterable[int | None] = (),
    merchant_ids: Iterable[int | None] = (),
    using: str | None = None,
) -> None:
    """Records changed products and merchants; ``offers_changed`` goes out once when the
    current transaction commits (right away outside one).

    The page cache's versions are recorded in the same transaction (one bump per transaction
    with whatever else it changed, ``storefront.caching.versions``): what a cart could cost is
    what the catalog and product pages show."""
    products, merchants = _ids(product_ids), _ids(merchant_ids)
    if not products and not merchants:
        return
    cache_versions_bump_on_commit(
        product_ids=products, catalog=True, shared=bool(merchants), using=using
    )
    pending = on_commit_once(_PendingChanges, _PendingChanges, using=using)
    now = pending is None
    if pending is None:
        pending = _PendingChanges(None)
    pending.product_ids |= products
    pending.merchant_ids |= merchants
    if now:
        pending()


def zone_index_replace_on_commit(*, using: str | None = None) -> None:
    """Has the zone index's stamp replaced when the current transaction commits (right away
    outside one), in the same once-per-transaction call that sends ``offers_changed``: for a
    merchant created or deleted, which the index lists whatever its zones."""
    pending = on_commit_once(_PendingChanges, _PendingChanges, using=using)
    if pending is None:
        from storefront.catalog.zone_index import zone_index_invalidate

        zone_index_invalidate()
        return
    pending.zone_index = True


class DeferredChanges:
    """The ids of the transactions that committed inside ``offers_changed_deferred``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # batches may commit on several writer threads
        self.product_ids: set[int] = set()
        self.merchant_ids: set[int] = set()

    def add(
        self, *, product_ids: Iterable[int | None] = (), merchant_ids: Iterable[int | None] = ()
    ) -> None:
        """Adds the ids of a transaction that committed (called after its ``atomic`` block)."""
        with self._lock:
            self.product_ids |= _ids(product_ids)
            self.merchant_ids |= _ids(merchant_ids)


@contextmanager
def offers_changed_deferred() -> Iterator[DeferredChanges]:
    """One ``offers_changed`` for many transactions: the writer records each transaction's
    ids with ``add`` once it committed; they are sent together when the block ends, normally
    or by an error (what committed before it stands and must be told), on the commit of the
    caller's transaction when there is one."""
    deferred = DeferredChanges()
    try:
        yield deferred
    finally:
        offers_changed_notify(product_ids=deferred.product_ids, merchant_ids=deferred.merchant_ids)


@receiver(post_save, sender="storefront.Merchant", dispatch_uid="zone_index.merchant_saved")
@receiver(post_delete, sender="storefront.Merchant", dispatch_uid="zone_index.merchant_deleted")
def merchant_changed(sender, created=None, **kwargs) -> None:
    """A merchant that comes or goes. Zone writes and a merchant's changed terms replace the
    stamp through ``offers_changed``, once per transaction and before its listeners run; a
    save that changes neither leaves the index as it is. It lives here, not beside the zone
    index, so that the zone index imports nothing of this module."""
    if created is False:
        return
    # After commit (a process rebuilding before it would read the old rows under a new stamp),
    # and in the transaction's one offers_changed call: deleting a merchant also deletes its
    # zones, which ask for the stamp too.
    zone_index_replace_on_commit(using=kwargs.get("using"))
