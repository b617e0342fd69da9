"""Full-search rates (assignments per second) behind ``Solution.estimates`` and the full
searches' slicing.

Like Jet.com's report, every answer says how long a full search of its cart would take on the
CPU and on the GPU. The rates are the planner's (:func:`gpu_engine.planning.profile.load_profile`:
the calibrated profile of this machine, else the packaged defaults), so estimates and planning never
disagree; a process that runs a full search replaces them with its own measurement, so
estimates follow the hardware actually serving.
"""

from __future__ import annotations

import math
import threading

from gpu_engine.planning.profile import load_profile

_lock = threading.Lock()
_measured: dict[str, float] = {}


def cpu_full_rate() -> float:
    return _measured.get("cpu") or load_profile().cpu_full_rate


def gpu_full_rate() -> float:
    return _measured.get("gpu") or load_profile().gpu_full_rate


def record_cpu_full_rate(rate: float) -> None:
    _record("cpu", rate)


def record_gpu_full_rate(rate: float) -> None:
    _record("gpu", rate)


def _record(key: str, rate: float) -> None:
    # Only searches long enough to time well are recorded, so the latest one is trusted as is.
    with _lock:
        _measured[key] = float(rate)


def full_search_estimates(complexity: int) -> dict[str, float]:
    cpu, gpu = cpu_full_rate(), gpu_full_rate()
    return {
        "cpu_full_search_s": _seconds(complexity, cpu),
        "gpu_full_search_s": _seconds(complexity, gpu),
        "cpu_rate": cpu,
        "gpu_rate": gpu,
    }


def _seconds(complexity: int, rate: float) -> float:
    # A 700-line cart has ~3^700 assignments, past any float: its search takes forever.
    if complexity.bit_length() > 1000:
        return math.inf
    return complexity / rate
