"""Full-search rates (assignments per second) behind ``Solution.estimates``.

Like Jet.com's report, every answer says how long a full search of its cart would take on the
CPU and on the GPU. The defaults are measured rates (BENCHMARKS_engine.md: CPU one core here,
GPU on the lent H200); a process that runs a full search replaces them with its own
measurement, so estimates follow the hardware actually serving.
"""

from __future__ import annotations

import threading

# One core of the lent H200 machine's Xeon, numba full search (bench suite full_search).
DEFAULT_CPU_FULL_RATE = 9.0e7
# The lent H200, numba-cuda full search, 10 lines x 8 offers end to end (bench full_search).
DEFAULT_GPU_FULL_RATE = 1.4e11

_lock = threading.Lock()
_measured: dict[str, float] = {}


def cpu_full_rate() -> float:
    return _measured.get("cpu", DEFAULT_CPU_FULL_RATE)


def gpu_full_rate() -> float:
    return _measured.get("gpu", DEFAULT_GPU_FULL_RATE)


def record_cpu_full_rate(rate: float) -> None:
    _record("cpu", rate)


def record_gpu_full_rate(rate: float) -> None:
    _record("gpu", rate)


def _record(key: str, rate: float) -> None:
    # Only searches long enough to time well are recorded, so the latest one is trusted as is.
    with _lock:
        _measured[key] = float(rate)


def full_search_estimates(complexity: int) -> dict[str, float]:
    return {
        "cpu_full_search_s": complexity / cpu_full_rate(),
        "gpu_full_search_s": complexity / gpu_full_rate(),
        "cpu_rate": cpu_full_rate(),
        "gpu_rate": gpu_full_rate(),
    }
