"""How many host threads numba's parallel code (the batch's host casts and plan) uses.

numba's parallel loops use a team of ``numba.get_num_threads()`` threads, by default every
core of the host (``NUMBA_NUM_THREADS``). Two gpu workers on one host (one per GPU) then run
two full teams on the same cores, and each OpenMP team spins waiting for threads the other
process holds: a 2,000-cart batch job took 0.23 s instead of 0.012-0.037 s. So a gpu worker
uses its share of the cores: ``GPU_ENGINE_HOST_THREADS`` (unset, empty or 0: numba's default),
applied once as the worker starts by :func:`host_threads_apply`, in the thread that runs its
jobs. For N gpu workers on a host, set it to ``cores // N``.

``numba.set_num_threads`` is thread-local: a new thread starts at numba's default, not at its
creator's count, so code that spreads work over threads (:mod:`gpu_engine.batch.multi`) passes
each thread its share with :func:`threads_limited`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping

ENV = "GPU_ENGINE_HOST_THREADS"
# Below these, the batch's parallel loops run on the calling thread alone: waking the pool costs
# more than the work (on a loaded machine, up to a hundred milliseconds against a fraction of one).
PARALLEL_MIN_CARTS = 20_000
PARALLEL_MIN_STEPS = 20_000_000


def host_threads_from_env(environ: Mapping[str, str] | None = None) -> int | None:
    """``GPU_ENGINE_HOST_THREADS`` as a thread count, None when unset, empty or 0."""
    raw = (os.environ if environ is None else environ).get(ENV, "").strip()
    if not raw:
        return None
    try:
        count = int(raw)
    except ValueError:
        raise ValueError(f"{ENV} must be a whole number of threads, got {raw!r}") from None
    if count < 0:
        raise ValueError(f"{ENV} must not be negative, got {count}")
    return count or None


def host_threads_apply(environ: Mapping[str, str] | None = None) -> int | None:
    """Sets numba's thread count of the calling thread from ``GPU_ENGINE_HOST_THREADS``
    (capped at numba's pool size). Returns the count set, None when the knob is unset (numba's
    default stays)."""
    import numba

    count = host_threads_from_env(environ)
    if count is None:
        return None
    count = min(count, int(numba.config.NUMBA_NUM_THREADS))
    numba.set_num_threads(count)
    return count


@contextlib.contextmanager
def threads_limited(count: int) -> Iterator[int]:
    """numba's thread count of the calling thread set to ``count`` (at least 1, at most the
    pool) while the block runs, then restored."""
    import numba

    count = max(1, min(int(count), int(numba.config.NUMBA_NUM_THREADS)))
    before = numba.get_num_threads()
    numba.set_num_threads(count)
    try:
        yield count
    finally:
        numba.set_num_threads(before)
