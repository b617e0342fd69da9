"""``gpu_engine.warmup``: every solver compiled once; the CPU-only flavour never touches CUDA."""

import pytest

import gpu_engine.device
from gpu_engine.solvers import SOLVERS
from gpu_engine.warmup import warmup

pytestmark = pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaDeprecationWarning")


def test_cpu_only_warmup_never_asks_for_cuda(monkeypatch):
    def no_cuda():
        raise AssertionError("warmup(include_gpu=False) asked whether a GPU is present")

    monkeypatch.setattr(gpu_engine.device, "gpu_available", no_cuda)
    timings = warmup(include_gpu=False)
    assert set(timings) == {name for name in SOLVERS if not name.startswith("gpu")}
    assert all(seconds >= 0 for seconds in timings.values())


def test_default_warmup_skips_gpu_solvers_without_a_real_gpu(monkeypatch):
    monkeypatch.setattr(gpu_engine.device, "gpu_available", lambda: False)
    assert set(warmup()) == {name for name in SOLVERS if not name.startswith("gpu")}
