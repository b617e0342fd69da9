"""Fake devices for the per-device kept state (:mod:`gpu_engine.batch.kept`): the simulator has
one device, so a test names the device each thread is on."""

import threading
from collections.abc import Iterator

import pytest

from gpu_engine.batch import kept as kept_module


@pytest.fixture
def fake_devices(monkeypatch) -> Iterator[threading.local]:
    """A fresh registry whose ``device_key()`` answers the calling thread's ``key`` (default
    0, the simulator's device); every device's kept state is given back afterwards."""
    from gpu_engine.batch import launch as batch_launch
    from gpu_engine.batch import overlap, staging

    where = threading.local()
    monkeypatch.setattr(kept_module, "_kept", {})
    monkeypatch.setattr(kept_module, "device_key", lambda: getattr(where, "key", 0))
    yield where
    batch_launch.release_scratch()
    overlap.release()
    staging.release()
