"""The batch's copy to the GPU through reusable pinned host buffers, in narrower integer types
where the batch's values allow it.

A pageable ``cuda.to_device`` runs at a few GB/s (the driver bounces it through its own pinned
memory); a copy from page-locked memory runs at the bus's speed. The CSR arrays are int64 on
the host (the CPU twin's types), but their values are small: pointers below 2^31 for any batch
under 2^31 lines/offers, cart-local merchants below 2^15, amounts (quantity * unit price, in
cents) below 2^31 for any line under 21 million EUR. One parallel pass per array casts it into
its pinned buffer and checks every value; an array with a value out of range goes wide (its own
type, pageable), so the narrowing never changes an answer. The kernels read the narrow arrays
with the same steps: Numba computes on int64 whatever the width it loads (integer operations
on narrower types widen to intp), and every sum in :mod:`gpu_engine.batch.ops` starts from an
int64 literal.

The pinned buffers are kept per device (:mod:`gpu_engine.batch.kept`) and grown as needed (a
gpu worker solves many batches); the device's staging lock keeps two threads on one device
from staging into the same buffer, while threads on other devices stage into their own. Each
array's copy is issued on one stream as soon as it is staged, so the next array's cast
overlaps it.

The parallel cast runs in numba's threading layer: "tbb" and "omp" take calls from several
host threads at once (one per GPU), "workqueue" aborts the process when two threads enter it,
so there the parallel casts take turns (:func:`_parallel_turns`).

Where the time goes: the cast is a CPU pass (about 50M values read and written at 1M carts, on
the host's cores), and every ``cuda.to_device`` allocates its device array (the previous
batch's arrays are freed by numba's deferred deallocations, ``cuMemFree``, which waits for the
device). :func:`upload` reports, per array, its bytes, the cast's and the call's host
milliseconds and the copy's device milliseconds (events), so a run shows which one costs.
The "overlap" variant (:mod:`gpu_engine.batch.overlap`) stages slices instead
(:func:`pinned`, :func:`cast_into`) into kept device arrays, chunk by chunk, behind kernels.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

import numba
import numpy as np

from gpu_engine.batch.kept import DeviceKept, every_device, kept_here

# Field: the narrow type it is copied as when every value fits.
NARROW: dict[str, type[np.integer]] = {
    "line_ptr": np.int32,
    "line_qty": np.int32,
    "offer_ptr": np.int32,
    "offer_merchant": np.int16,
    "offer_amount": np.int32,
    "merch_ptr": np.int32,
    "merch_row": np.int32,
}
# Below this many elements one thread casts: waking numba's pool costs more than the pass.
PARALLEL_MIN = 1 << 20
GROWTH = 1.25
# numba threading layers that take parallel calls from several host threads at once.
THREADSAFE_LAYERS = ("tbb", "omp")

# Taken only where the threading layer is not thread-safe (see the module).
_workqueue_lock = threading.Lock()


def narrow_dtype(name: str, values: np.ndarray) -> np.dtype:
    """The type ``values`` travels as (without checking the values: see :func:`upload`)."""
    return np.dtype(NARROW.get(name, values.dtype))


def upload(
    arrays: dict[str, np.ndarray],
    timings: dict[str, float] | None = None,
    *,
    kept: DeviceKept | None = None,
) -> dict:
    """Device copies of ``arrays`` on the current device (whose kept state is ``kept``; None:
    look it up): each field of :data:`NARROW` cast into the device's pinned buffer when all
    its values fit the narrow type (else its own type, pageable), the others as they are.
    Returns when every copy is done. ``timings`` receives per array ``in_<name>_mb``,
    ``in_<name>_cast_ms`` (host cast), ``in_<name>_call_ms`` (host: allocation and enqueue)
    and ``in_<name>_copy_ms`` (device time of the copy, from events; absent in the
    simulator)."""
    from numba import cuda

    kept = kept_here() if kept is None else kept
    out = {}
    marks = []
    with kept.stage_lock:
        stream = cuda.stream()
        for name, values in arrays.items():
            t0 = time.perf_counter()
            staged = _stage(kept, name, np.ascontiguousarray(values))
            t1 = time.perf_counter()
            before, after = cuda.event(), cuda.event()
            before.record(stream)
            out[name] = cuda.to_device(staged, stream=stream)
            after.record(stream)
            marks.append((name, staged.nbytes, t1 - t0, time.perf_counter() - t1, before, after))
        stream.synchronize()
    if timings is not None:
        for name, nbytes, cast_s, call_s, before, after in marks:
            timings[f"in_{name}_mb"] = nbytes / 1e6
            timings[f"in_{name}_cast_ms"] = cast_s * 1e3
            timings[f"in_{name}_call_ms"] = call_s * 1e3
            copy_ms = before.elapsed_time(after)
            if copy_ms >= 0:  # the simulator's events have no times
                timings[f"in_{name}_copy_ms"] = copy_ms
    return out


def pinned(
    name: str, size: int, dtype: type | np.dtype, *, kept: DeviceKept | None = None
) -> np.ndarray:
    """A pinned host array of ``size`` values of ``dtype``, kept per device (``kept``; None:
    the current one) and ``name`` and grown as needed. The caller keeps other threads off
    ``name`` until its copies are done."""
    dtype = np.dtype(dtype)
    kept = kept_here() if kept is None else kept
    return _buffer(kept, name, max(1, size) * dtype.itemsize).view(dtype)[:size]


def cast_into(values: np.ndarray, target: np.ndarray) -> bool:
    """``values`` cast into ``target`` (as long), in parallel for large arrays; True when every
    value fits ``target``'s type (else ``target`` holds truncated values: discard it)."""
    if values.size == 0:
        return True
    info = np.iinfo(target.dtype)
    cast = _cast_parallel if values.size >= PARALLEL_MIN else _cast
    return cast(values, target, info.min, info.max)


def _stage(kept: DeviceKept, name: str, values: np.ndarray) -> np.ndarray:
    """``values`` cast into the device's pinned buffer of ``name``, or ``values`` itself when
    it has no narrow type or a value does not fit it."""
    if name not in NARROW or values.size == 0:
        return values
    target = pinned(name, values.size, NARROW[name], kept=kept)
    return target if cast_into(values, target) else values


def _buffer(kept: DeviceKept, name: str, nbytes: int) -> np.ndarray:
    from numba import cuda

    held = kept.pinned.get(name)
    if held is None or held.size < nbytes:
        # Whole int64 words, so that any integer type views the buffer.
        held = cuda.pinned_array(8 * (int(nbytes * GROWTH) // 8 + 1), dtype=np.uint8)
        kept.pinned[name] = held
    return held


def release() -> None:
    """Give every device's pinned buffers back (tests; a worker keeps them)."""
    for kept in every_device():
        with kept.stage_lock, kept.lock:
            kept.pinned.clear()


def _cast_steps(values, target, lo, hi, parts):
    """Cast ``values`` into ``target`` in ``parts`` slices (one per prange iteration); True
    when every value lies in ``lo .. hi``."""
    n = values.size
    step = (n + parts - 1) // parts
    bad = np.zeros(parts, dtype=np.uint8)
    for p in numba.prange(parts):
        for i in range(p * step, min(n, (p + 1) * step)):
            v = values[i]
            if v < lo or v > hi:
                bad[p] = 1
            target[i] = v
    return bad.sum() == 0


# nogil: the casts touch arrays only, and a thread casting for one GPU must not hold the GIL
# that the thread of another GPU needs to enqueue its copies and kernels.
_cast_parts = numba.njit(cache=True, parallel=True, nogil=True)(_cast_steps)
_cast_serial = numba.njit(cache=True, nogil=True)(_cast_steps)


def _cast_parallel(values, target, lo, hi) -> bool:
    with _parallel_turns():
        return bool(_cast_parts(values, target, lo, hi, 4 * numba.get_num_threads()))


@contextlib.contextmanager
def _parallel_turns() -> Iterator[None]:
    """Nothing where numba's threading layer takes calls from several threads at once; else
    (workqueue, or no layer chosen yet: the first parallel call chooses it) one process-wide
    lock, so two GPUs' host threads cast in turn instead of aborting the process."""
    if threading_layer() in THREADSAFE_LAYERS:
        yield
        return
    with _workqueue_lock:
        yield


def threading_layer() -> str | None:
    """numba's threading layer, None before the first parallel call has chosen one."""
    try:
        return str(numba.threading_layer())
    except ValueError:
        return None


def _cast(values, target, lo, hi) -> bool:
    return bool(_cast_serial(values, target, lo, hi, 1))


def warm() -> None:
    """Compile both casts for every pair of types a batch can need (a benchmark's warm-up:
    small batches only take the one-thread cast)."""
    for source in (np.int64, np.int32):
        for target in {*NARROW.values(), source}:
            values = np.zeros(1, dtype=source)
            info = np.iinfo(target)
            _cast_parts(values, np.zeros(1, dtype=target), info.min, info.max, 1)
            _cast_serial(values, np.zeros(1, dtype=target), info.min, info.max, 1)
