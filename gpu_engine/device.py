"""Run-time GPU detection. Nothing here touches CUDA at import time."""

from __future__ import annotations

import functools
import os


def simulator_enabled() -> bool:
    """True when numba runs CUDA kernels in its Python simulator (CI)."""
    import numba

    return bool(numba.config.ENABLE_CUDASIM) or os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


@functools.cache
def gpu_available() -> bool:
    """True only for a real CUDA GPU: the simulator's ``cuda.is_available()`` says True too."""
    if simulator_enabled():
        return False
    try:
        from numba import cuda

        return bool(cuda.is_available())
    except Exception:  # a broken driver or toolkit means no GPU, not a crashed worker
        return False


def resolve_device(device: str = "auto") -> str:
    """``"cuda"`` or ``"cpu"`` for a caller's device choice. "auto" means a real GPU when one
    is present (never the simulator, which is for tests that ask for it); "cuda" (or "gpu")
    and "cpu" are taken as given, so tests can run kernels in the simulator."""
    if device in ("cuda", "gpu"):
        return "cuda"
    if device == "cpu":
        return "cpu"
    if device != "auto":
        raise ValueError(f"device must be 'auto', 'cuda' (or 'gpu') or 'cpu', got {device!r}")
    return "cuda" if gpu_available() else "cpu"


def cuda_target_available() -> bool:
    """A real GPU or the simulator: somewhere CUDA kernels can run."""
    return simulator_enabled() or gpu_available()


def gpu_name() -> str:
    """The current device's name, ``"cuda-simulator"`` in the simulator."""
    if simulator_enabled():
        return "cuda-simulator"
    from numba import cuda

    name = cuda.get_current_device().name
    return name.decode() if isinstance(name, bytes) else str(name)


def require_gpu_for(algorithm: str) -> None:
    """Refuse a GPU algorithm where CUDA kernels cannot run (no real GPU, no simulator): one
    message for every GPU solver."""
    if not cuda_target_available():
        from gpu_engine.problem import DeviceUnavailable

        raise DeviceUnavailable(
            "algorithm",
            algorithm,
            "needs a CUDA GPU and none is available here; use auto or a cpu algorithm",
        )
