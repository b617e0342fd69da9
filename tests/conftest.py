"""Shared test setup.

CI has no GPU, so CUDA kernels run in Numba's simulator. The variable must be set
before numba is first imported, which is why it is set here, at the very top (and in the
test settings, which pytest-django imports even earlier). On the device machine,
``SMARTCART_REAL_GPU=1`` keeps the real CUDA target for ``gpu`` tests.
"""

import os

if os.environ.get("SMARTCART_REAL_GPU") != "1":
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

# The planner must see the packaged rate profile, not whatever `make calibrate` left in this
# user's cache: routing and planner tests would otherwise depend on the machine's history.
os.environ.setdefault(
    "GPU_ENGINE_PROFILE",
    os.path.join(
        os.path.dirname(__file__), os.pardir, "gpu_engine", "planning", "default_profile.json"
    ),
)

from pathlib import Path

import pytest

# Under xdist (`make test`: -n 2 --dist loadgroup) tests of one group run on one worker, one
# at a time: each browser test drives a chromium of its own against its worker's live server,
# and each integration test starts a Celery worker process, and two of either at once on CI's
# two cores only thrash. Their state is already per worker (live_server's free port, Redis key
# prefixes per test, pytest-django's per-worker test database, which the Celery worker is given).
XDIST_GROUPS = {"e2e": "browser", "integration": "celery-worker"}

# `make test-fast` leaves out e2e, integration, cudasim and slow tests (pyproject.toml says what
# each means). Most carry their mark in their module; these two kinds are marked here, so that
# a new file gets its mark without remembering it: every test under tests/e2e, and every test
# parametrised with a simulated CUDA device or a gpu-* algorithm, which runs its kernels in
# Numba's simulator.
E2E_DIR = Path(__file__).resolve().parent / "e2e"
SIMULATED_DEVICES = {"cuda", "gpu"}


def _simulated(item) -> bool:
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return False
    algorithm = callspec.params.get("algorithm")
    return callspec.params.get("device") in SIMULATED_DEVICES or (
        isinstance(algorithm, str) and algorithm.startswith("gpu")
    )


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by these marks
def pytest_collection_modifyitems(config, items):
    for item in items:
        if E2E_DIR in item.path.parents:
            item.add_marker(pytest.mark.e2e)
        if _simulated(item):
            item.add_marker(pytest.mark.cudasim)
    for item in items:
        for marker, group in XDIST_GROUPS.items():
            if marker in item.keywords:
                item.add_marker(pytest.mark.xdist_group(group))
                break
    if os.environ.get("SMARTCART_REAL_GPU") == "1":
        return
    skip_gpu = pytest.mark.skip(reason="needs a real GPU (SMARTCART_REAL_GPU=1 on the device)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip_gpu)


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Rate-limit counters and memoised values must not leak from one test into the next (user
    ids repeat across tests on SQLite). The GPU machine runs tests/gpu_engine without Django."""
    try:
        from django.conf import settings
    except ImportError:
        settings = None
    if settings is not None and settings.configured:
        from django.core.cache import cache

        cache.clear()
    yield
