"""A lane: work of a price-watch run done on a thread of its own, with its own connection.

A run reads the next chunk and writes the last one's notices while it packs, solves and
builds the notices of the current one: the server works on those statements in its own
processes while this one's thread computes. On PostgreSQL outside a transaction a lane is a
thread with its own connection (closed at ``close``) running its work in order; elsewhere,
or inside a transaction (whose rows another connection would not see), the work runs in line.
"""

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from django.db import connection

T = TypeVar("T")


class Lane:
    """``submit(work)`` returns a getter of the work's result (its error raised by the
    getter); ``meter`` (``meter_factory()``) counts the statements run on the lane's
    connection (``None`` in line: the caller's connection counts them)."""

    def __init__(self, *, meter_factory: Callable[[], Any]) -> None:
        threaded = connection.vendor == "postgresql" and not connection.in_atomic_block
        self._pool = ThreadPoolExecutor(max_workers=1) if threaded else None
        self.meter = meter_factory() if threaded else None

    def submit(self, work: Callable[[], T]) -> Callable[[], T]:
        if self._pool is None:
            value = work()
            return lambda: value
        return self._pool.submit(self._in_thread, work).result

    def _in_thread(self, work: Callable[[], T]) -> T:
        assert self.meter is not None
        with connection.execute_wrapper(self.meter):
            return work()

    def close(self) -> None:
        """Waits for the work submitted; closes the lane's connection."""
        if self._pool is None:
            return
        # The lane's connection is closed on its thread (``connection`` is looked up there:
        # each thread has its own).
        self._pool.submit(_close_connection).result()
        self._pool.shutdown()


def _close_connection() -> None:
    connection.close()
