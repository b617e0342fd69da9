"""The CPU GA's work spread over the cores, in chunks that stop at a deadline.

A step of the CPU GA (the initial population, a generation, the elite pass) is a range of
independent items (slots, or elite moves): each one reads only a snapshot and writes only its own
row, so which thread computes it, and in which order, cannot change the result. Threads claim
chunks of the range in order from a shared cursor and call a ``nogil`` numba function on each;
between chunks they look at the clock, so a step stops within one chunk of its deadline (the
items done so far are kept). Chunks grow while they take less than ``CHUNK_S`` and shrink when
they take more, so the clock is read a few hundred times a second whatever the cart's size;
near the deadline they shrink to what is predicted to end before it.

Threads: ``numba.config.NUMBA_NUM_THREADS`` (environment ``NUMBA_NUM_THREADS``), at most the
cores this process may run on. A step whose first chunk shows that the whole range is smaller
than ``INLINE_S`` runs on the calling thread alone: handing it to others would cost more.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

# Target time of one chunk: the granularity of the deadline, and what a chunk's Python
# dispatch (some tens of microseconds) is small against.
CHUNK_S = 0.002
# A step predicted (from its first chunk) to take less than this runs on the calling thread.
INLINE_S = 0.0005

# work(worker, lo, hi): compute items [lo, hi) with the scratch of ``worker``.
Work = Callable[[int, int, int], None]


def cpu_threads() -> int:
    """Threads the CPU GA uses: numba's thread count, at most the cores this process may use."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(int(numba.config.NUMBA_NUM_THREADS), cores))


_pool_lock = threading.Lock()
_pool: tuple[int, int, ThreadPoolExecutor] | None = None  # (pid, workers, executor)


def _executor(workers: int) -> ThreadPoolExecutor:
    """One executor per process (a forked worker builds its own: threads do not survive a
    fork), grown when more workers are asked for."""
    global _pool
    with _pool_lock:
        if _pool is None or _pool[0] != os.getpid() or _pool[1] < workers:
            _pool = (os.getpid(), workers, ThreadPoolExecutor(workers, "ga-cpu"))
        return _pool[2]


class _Cursor:
    """The next unclaimed item, shared by the threads of one step."""

    def __init__(self, count: int, start: int) -> None:
        self.count = count
        self.next = start
        self.lock = threading.Lock()
        self.stopped = False

    def claim(self, size: int) -> tuple[int, int]:
        with self.lock:
            lo = self.next
            hi = min(self.count, lo + size)
            self.next = hi
            return lo, hi


def run_chunks(
    count: int,
    work: Work,
    *,
    deadline: float | None,
    threads: int,
    must: int = 0,
    clock: Callable[[], float] = time.perf_counter,
) -> np.ndarray:
    """Compute items ``[0, count)`` with ``work`` on up to ``threads`` threads, stopping at
    ``deadline`` (a ``clock()`` value; None: never). The first ``must`` items run whatever the
    clock says (a first population needs an individual to show). Returns a boolean mask of the
    items done."""
    done = np.zeros(count, dtype=np.bool_)
    first = min(count, max(1, must))
    t0 = clock()
    if count == 0 or (must <= 0 and deadline is not None and t0 >= deadline):
        return done
    work(0, 0, first)
    done[:first] = True
    first_s = clock() - t0
    cursor = _Cursor(count, first)
    size = _chunk_size(first_s, first)
    item_s = first_s / first
    if threads <= 1 or item_s * (count - first) < INLINE_S:
        _work_loop(0, cursor, work, done, deadline, clock, size, item_s)
        return done
    pool = _executor(threads - 1)
    args = (cursor, work, done, deadline, clock, size, item_s)
    helpers = [pool.submit(_work_loop, w, *args) for w in range(1, threads)]
    try:
        _work_loop(0, *args)
    finally:
        # A failing worker stops the others (``_work_loop``). A helper still queued (another
        # solve in this process holds the pool) is dropped; a running one is waited for, so
        # none writes into the caller's arrays after this returns.
        for helper in helpers:
            if not helper.cancel():
                helper.result()
    return done


def _chunk_size(seconds: float, size: int) -> int:
    if seconds <= 0:
        return size * 4
    return max(1, min(size * 4, int(size * CHUNK_S / seconds)))


def _work_loop(
    worker: int,
    cursor: _Cursor,
    work: Work,
    done: np.ndarray,
    deadline: float | None,
    clock: Callable[[], float],
    size: int,
    item_s: float,
) -> None:
    """Claim and compute chunks until the range is done or the deadline comes. Near the
    deadline a chunk shrinks to the items predicted (from this thread's last chunk) to end
    before it, and none is started that could not: on a large cart one item takes tens of ms,
    which a late start would add to the wall time."""
    while not cursor.stopped:
        t0 = clock()
        if deadline is not None:
            fits = (deadline - t0) / item_s if item_s > 0 else float(size)
            if fits < 1:
                cursor.stopped = True
                return
            size = max(1, min(size, int(fits)))
        lo, hi = cursor.claim(size)
        if lo >= hi:
            return
        try:
            work(worker, lo, hi)
        except BaseException:
            cursor.stopped = True
            raise
        done[lo:hi] = True
        seconds = clock() - t0
        item_s = seconds / (hi - lo)
        size = _chunk_size(seconds, hi - lo)
