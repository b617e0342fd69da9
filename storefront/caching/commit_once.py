"""One callback per outermost transaction, however many writes inside it ask for one.

Writers record what they changed on a *pending* object; the first request in a transaction
registers it with ``transaction.on_commit`` and later ones find it again, so the work (a
version bump, a signal) runs once when the transaction commits and never for a rollback.
Used by the page cache's versions (``storefront.caching.versions``) and ``offers_changed``
(``storefront.catalog.offer_changes``).
"""

from collections.abc import Callable
from typing import Protocol, TypeVar

from django.db import transaction


class Pending(Protocol):
    block: object | None

    def __call__(self) -> None: ...


P = TypeVar("P", bound=Pending)


def outermost_block(connection) -> object | None:
    """The transaction's outermost ``atomic`` block, ``None`` outside one. A test case's
    wrapping blocks do not count: they never commit, and each write a test makes outside its
    own ``atomic`` is its own transaction, as in production."""
    for block in connection.atomic_blocks:
        if not getattr(block, "_from_testcase", False):
            return block
    return None


def on_commit_once(
    kind: type[P], make: Callable[[object | None], P], *, using: str | None = None
) -> P | None:
    """The ``kind`` pending object of the transaction in progress, made with ``make(block)``
    and registered (``robust``: a failing callback is logged, the commit stands) on first
    use. ``None`` outside a transaction, where the caller acts at once: the write committed.

    Inside a test case's wrapping transaction only (no block of the code's own), every call
    registers a fresh object: that is what ``django_capture_on_commit_callbacks`` runs."""
    connection = transaction.get_connection(using)
    if not connection.in_atomic_block:
        return None
    block = outermost_block(connection)
    if block is not None:
        for entry in connection.run_on_commit:
            callback = entry[1]
            if isinstance(callback, kind) and callback.block is block:
                return callback
    pending = make(block)
    # Django logs a failed robust callback by its __qualname__, which an instance lacks: the
    # AttributeError would escape the commit and answer 500 for a write that was saved.
    setattr(pending, "__qualname__", type(pending).__qualname__)  # noqa: B010
    transaction.on_commit(pending, using=using, robust=True)
    return pending
