"""What the GPU batch keeps between batches, one set per CUDA device of this process.

A gpu worker solves many batches, so the batch solver keeps its DP scratch
(:mod:`gpu_engine.batch.cuda`), the "overlap" variant's device arrays and streams
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
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np


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
    return kept


def kept_here() -> DeviceKept:
    """The kept state of the current thread's device."""
    return kept_for(device_key())


def every_device() -> list[DeviceKept]:
    """Every device's kept state made so far."""
    with _registry_lock:
        return list(_kept.values())
