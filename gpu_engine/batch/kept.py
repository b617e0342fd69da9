"""What the GPU batch keeps between batches, one set per CUDA device of this process.

A gpu worker solves many batches, so the batch solver keeps its DP scratch
(:mod:`gpu_engine.batch.launch`), the "overlap" variant's device arrays and streams
(:mod:`gpu_engine.batch.overlap`) and the pinned host buffers it stages through
(:mod:`gpu_engine.batch.staging`). Device arrays and streams belong to the CUDA context that
made them: a buffer from GPU 0 must never reach a kernel launched on GPU 1. So each device
(the current context's device id when a batch starts, :func:`device_key`) gets its own
:class:`DeviceKept`, with its own locks: two host threads on two GPUs
(:mod:`gpu_engine.batch.multi`) never share a buffer or wait for each other, while two threads
on the same GPU still take turns on its buffers.

The pinned host buffers could serve any context (unified addressing), but a buffer is written
by the thread that stages through it until its copies are done, so they are kept per device
too. Finding a device's set takes no lock once it exists (a dict read); only the first batch
on a device takes the registry's lock to make it. Nothing here touches CUDA at import time.

At exit: device arrays, streams and pinned buffers are freed by finalizers, which would run
during interpreter teardown, after or while the CUDA contexts go away (a process that had
used two GPUs from threads segfaulted after its last output). So the first device state made
registers :func:`release_every_device` with :mod:`atexit` (lazily: by then numba's driver is
loaded, and atexit runs handlers last-in first-out, so ours runs while every context is
alive); it synchronises each device and frees its kept state inside that device's context.
Share threads (:mod:`gpu_engine.batch.multi`) own no kept state and release nothing.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

# How long the exit hook waits for a batch still running on a device (a daemon thread).
EXIT_LOCK_S = 10.0


@dataclass(eq=False)
class DeviceKept:
    """One device's kept state. ``lock``: held while kernels use ``scratch``, ``arrays`` or
    ``streams`` (and the "overlap" variant's pinned buffers); ``stage_lock``: held while a
    batch is staged through ``pinned`` by :func:`gpu_engine.batch.staging.upload`."""

    key: int
    lock: threading.Lock = field(default_factory=threading.Lock)
    stage_lock: threading.Lock = field(default_factory=threading.Lock)
    scratch: dict[str, Any] = field(default_factory=dict)
    arrays: dict[str, Any] = field(default_factory=dict)
    streams: list[Any] = field(default_factory=list)
    pinned: dict[str, np.ndarray] = field(default_factory=dict)

    def scratch_bytes(self) -> int:
        """Bytes of DP scratch this device keeps."""
        return sum(int(a.nbytes) for a in self.scratch.values())


_kept: dict[int, DeviceKept] = {}
_registry_lock = threading.Lock()
_exit_hook_registered = False


def device_key() -> int:
    """The id of the device whose context is current in this thread (the simulator's one
    device is 0). Creates the context when the thread has none, as any CUDA call would."""
    from numba import cuda

    context = cuda.current_context()
    device_id: Any = getattr(getattr(context, "device", None), "id", None)
    if device_id is None:  # the simulator's fake device has no id; its context has
        device_id = getattr(context, "id", 0)
    return int(device_id)


def kept_for(key: int) -> DeviceKept:
    """The kept state of device ``key`` (made on first use)."""
    kept = _kept.get(key)
    if kept is None:
        with _registry_lock:
            kept = _kept.setdefault(key, DeviceKept(key=key))
            _register_exit_hook()
    return kept


def kept_here() -> DeviceKept:
    """The kept state of the current thread's device."""
    return kept_for(device_key())


def every_device() -> list[DeviceKept]:
    """Every device's kept state made so far."""
    with _registry_lock:
        return list(_kept.values())


def _register_exit_hook() -> None:
    """Registers :func:`release_every_device` once per process (the caller holds
    ``_registry_lock``)."""
    global _exit_hook_registered
    if not _exit_hook_registered:
        atexit.register(release_every_device)
        _exit_hook_registered = True


def _device_context(key: int) -> contextlib.AbstractContextManager[Any]:
    """Device ``key``'s context made current in this thread while the block runs."""
    from numba import cuda

    return cuda.gpus[key]


def release_every_device(
    device_context: Callable[[int], contextlib.AbstractContextManager[Any]] | None = None,
) -> list[int]:
    """Frees every device's kept state inside that device's context, after its work is done,
    and flushes numba's pending deallocations there; the registry is emptied, so a second call
    frees nothing. Returns the keys released. A device whose batch still holds its locks after
    :data:`EXIT_LOCK_S` is left alone (freeing buffers under a running kernel is worse)."""
    enter = device_context or _device_context
    with _registry_lock:
        kept_list = list(_kept.values())
        _kept.clear()
    released = []
    for kept in kept_list:
        if not kept.stage_lock.acquire(timeout=EXIT_LOCK_S):
            logger.warning("device %s still stages a batch at exit; its state is kept", kept.key)
            continue
        try:
            if not kept.lock.acquire(timeout=EXIT_LOCK_S):
                logger.warning("device %s still runs a batch at exit; its state is kept", kept.key)
                continue
            try:
                _release_in_context(kept, enter)
                released.append(kept.key)
            finally:
                kept.lock.release()
        finally:
            kept.stage_lock.release()
    return released


def _release_in_context(
    kept: DeviceKept, enter: Callable[[int], contextlib.AbstractContextManager[Any]]
) -> None:
    from numba import cuda

    try:
        with enter(kept.key):
            cuda.synchronize()
            kept.scratch.clear()
            kept.arrays.clear()
            kept.streams.clear()
            kept.pinned.clear()
            # Finalizers queue device frees; a cycle may still hold a buffer.
            gc.collect()
            deallocations = getattr(cuda.current_context(), "deallocations", None)
            if deallocations is not None:
                deallocations.clear()
    except Exception:  # at exit: report, and let the other devices be released
        logger.exception("releasing device %s's kept state failed", kept.key)
