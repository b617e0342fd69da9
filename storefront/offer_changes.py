"""``offers_changed``: the signal other apps listen to when what a cart could cost moved.

Sent once per committed transaction that changed offers (price, stock, active, product),
a merchant's terms (shipping, discount, active) or a merchant's shipping zones, with the ids
of the products and merchants concerned. Every writer calls ``offers_changed_notify``: the
model receivers (``storefront.receivers``) for ORM saves and deletes, the admin's bulk
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

from django.db import transaction
from django.dispatch import Signal

offers_changed = Signal()


class _PendingChanges:
    """The ids a transaction changed so far; called once on commit to send the signal."""

    def __init__(self, block: object) -> None:
        self.block = block
        self.product_ids: set[int] = set()
        self.merchant_ids: set[int] = set()

    def __call__(self) -> None:
        from storefront.models import Offer
        from storefront.zone_index import zone_index_invalidate

        if self.merchant_ids:
            # Listeners may price carts with the zone index right away, and its own
            # on-commit invalidation may come after this one.
            zone_index_invalidate()
        offers_changed.send(
            sender=Offer,
            product_ids=frozenset(self.product_ids),
            merchant_ids=frozenset(self.merchant_ids),
        )


def _ids(values: Iterable[int | None]) -> set[int]:
    return {int(value) for value in values if value is not None}


def _transaction(connection) -> object | None:
    """The outermost ``atomic`` block of the transaction in progress (a test case's own
    wrapping blocks do not count: each test write outside the test's ``atomic`` is its own
    transaction, as in production), ``None`` outside one."""
    for block in connection.atomic_blocks:
        if not getattr(block, "_from_testcase", False):
            return block
    return None


def _pending(using: str | None) -> _PendingChanges:
    """This transaction's pending set, registered with ``on_commit`` on first use; outside a
    transaction a fresh one, sent by the caller."""
    connection = transaction.get_connection(using)
    block = _transaction(connection)
    if block is None:
        return _PendingChanges(None)
    for entry in connection.run_on_commit:
        if isinstance(entry[1], _PendingChanges) and entry[1].block is block:
            return entry[1]
    pending = _PendingChanges(block)
    transaction.on_commit(pending, using=using, robust=True)
    return pending


def offers_changed_notify(
    *,
    product_ids: Iterable[int | None] = (),
    merchant_ids: Iterable[int | None] = (),
    using: str | None = None,
) -> None:
    """Records changed products and merchants; ``offers_changed`` goes out once when the
    current transaction commits (right away outside one)."""
    products, merchants = _ids(product_ids), _ids(merchant_ids)
    if not products and not merchants:
        return
    pending = _pending(using)
    pending.product_ids |= products
    pending.merchant_ids |= merchants
    if pending.block is None:
        # No transaction of its own: committed already (autocommit), or in a test case's
        # wrapping transaction, where on_commit is what the test captures.
        if transaction.get_connection(using).in_atomic_block:
            transaction.on_commit(pending, using=using, robust=True)
        else:
            pending()


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
