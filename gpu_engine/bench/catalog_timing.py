"""Timing of the catalog benchmark (:mod:`gpu_engine.bench.catalog`): CUDA events of numba,
torch and CuPy behind one interface, and the median of batches of back-to-back launches."""

from __future__ import annotations

import statistics


def time_ms(launch, make_event, *, repeats, batch, sync):
    """Median ms per launch: untimed launches keep the queue full, then ``batch`` timed ones."""
    for i in range(3):
        launch(i)
    sync()
    samples = []
    for r in range(repeats):
        launch(r)
        launch(r + 1)
        start, end = make_event(), make_event()
        start.record()
        for i in range(batch):
            launch(r + i)
        end.record()
        end.synchronize()
        samples.append(start.elapsed_ms(end) / batch)
    return statistics.median(samples), min(samples), max(samples)


class NumbaEvent:
    def __init__(self):
        from numba import cuda

        self._event = cuda.event()

    def record(self):
        self._event.record()

    def synchronize(self):
        self._event.synchronize()

    def elapsed_ms(self, end):
        from numba import cuda

        return cuda.event_elapsed_time(self._event, end._event)


class TorchEvent:
    def __init__(self):
        import torch

        self._event = torch.cuda.Event(enable_timing=True)

    def record(self):
        self._event.record()

    def synchronize(self):
        self._event.synchronize()

    def elapsed_ms(self, end):
        return self._event.elapsed_time(end._event)


class CupyEvent:
    def __init__(self):
        import cupy

        self._event = cupy.cuda.Event()

    def record(self):
        self._event.record()

    def synchronize(self):
        self._event.synchronize()

    def elapsed_ms(self, end):
        import cupy

        return cupy.cuda.get_elapsed_time(self._event, end._event)


def numba_sync():
    from numba import cuda

    cuda.synchronize()


def timed_row(case, timing, **extra):
    median, low, high = timing
    return {"suite": "catalog", "case": case, "ms": round(median, 5), "min_ms": round(low, 5),
            "max_ms": round(high, 5), **extra}  # fmt: skip
