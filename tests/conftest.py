"""Shared test setup.

CI has no GPU, so CUDA kernels run in Numba's simulator. The variable must be set
before numba is first imported, which is why it is set here, at the very top. On the
device machine, ``SMARTCART_REAL_GPU=1`` keeps the real CUDA target for ``gpu`` tests.
"""

import os

if os.environ.get("SMARTCART_REAL_GPU") != "1":
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import pytest


def pytest_collection_modifyitems(config, items):
    if os.environ.get("SMARTCART_REAL_GPU") == "1":
        return
    skip_gpu = pytest.mark.skip(reason="needs a real GPU (SMARTCART_REAL_GPU=1 on the device)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip_gpu)
