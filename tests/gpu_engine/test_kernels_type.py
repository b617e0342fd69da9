"""Every batch and full-search kernel variant types and lowers for an H100 without a GPU
(:mod:`tests.gpu_engine.kernel_typing`, in a process of its own: this suite runs numba's CUDA
simulator, which never types a kernel and so passed code the device refused: a local array
sized by a module attribute, typed as a runtime int64)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_every_kernel_variant_types_for_an_h100():
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_ENABLE_CUDASIM"}
    run = subprocess.run(
        [sys.executable, "-m", "tests.gpu_engine.kernel_typing"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert run.stdout.count("ok ") == 14
