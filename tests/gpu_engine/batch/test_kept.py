"""What the GPU batch keeps between batches is kept per device (issue 17): every device key has
its own scratch, arrays, streams, pinned buffers and locks, so a thread on one device never
waits for a lock another device's batch holds, while batches on the same device take turns and
reuse the same buffers. The simulator has one device; the tests give threads fake device keys
(what ``cuda.current_context().device.id`` says on a real host)."""

import threading

import numpy as np
import pytest

from gpu_engine.batch import overlap, solve_packed, staging
from gpu_engine.batch.kept import DeviceKept, device_key, kept_for
from gpu_engine.batch.synthetic import synthetic_batch

# Kept variants (all but "baseline" keep scratch; "overlap" keeps arrays and streams too).
KEEPING = ("pinned", "split-warp", "overlap")
# Generous: the shared CI machine runs simulated kernels slowly.
JOIN_S = 240


class _Solve(threading.Thread):
    """Solves ``batch`` on fake device ``key`` (the ``fake_devices`` fixture) once started."""

    def __init__(self, where: threading.local, key: int, batch, variant: str) -> None:
        super().__init__(daemon=True)
        self.where, self.key, self.batch, self.variant = where, key, batch, variant
        self.result = None

    def run(self) -> None:
        self.where.key = self.key
        self.result = solve_packed(self.batch, device="gpu", gpu_variant=self.variant)


def _solve_on(where: threading.local, key: int, batch, variant: str) -> _Solve:
    thread = _Solve(where, key, batch, variant)
    thread.start()
    return thread


def test_the_simulators_device_is_key_zero():
    assert device_key() == 0


def test_each_device_key_has_its_own_state_and_the_same_key_the_same(fake_devices):
    a, b = kept_for(11), kept_for(12)
    assert kept_for(11) is a and isinstance(a, DeviceKept) and (a.key, b.key) == (11, 12)
    assert a.lock is not b.lock and a.stage_lock is not b.stage_lock
    for name in ("scratch", "arrays", "streams", "pinned"):
        assert getattr(a, name) is not getattr(b, name)
    # The first look-up on a device from many threads at once still makes one state.
    seen: list[DeviceKept] = []
    threads = [threading.Thread(target=lambda: seen.append(kept_for(13))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(k) for k in seen}) == 1


@pytest.mark.cudasim
@pytest.mark.parametrize("variant", KEEPING)
def test_a_batch_on_one_device_never_waits_for_another_devices_locks(fake_devices, variant):
    batch = synthetic_batch(12, seed=4, max_lines=6, max_offers=5, pool=8)
    want = solve_packed(batch, device="cpu")
    busy = kept_for(21)
    # Device 21 is "running kernels" and "staging" for as long as the test lasts.
    with busy.lock, busy.stage_lock:
        thread = _solve_on(fake_devices, 22, batch, variant)
        thread.join(JOIN_S)
        assert not thread.is_alive(), "a batch on device 22 waited for device 21's lock"
    got = thread.result
    assert got is not None
    np.testing.assert_array_equal(got.total, want.total)
    np.testing.assert_array_equal(got.choice, want.choice)
    mine = kept_for(22)
    assert {"ws", "pick"} <= set(mine.scratch)
    if variant == "overlap":
        assert mine.arrays and mine.streams and any(n.startswith("overlap_") for n in mine.pinned)
    else:
        assert "offer_amount" in mine.pinned
    # Nothing of this batch landed in the busy device's state.
    assert not (busy.scratch or busy.arrays or busy.streams or busy.pinned)


@pytest.mark.cudasim
def test_batches_on_the_same_device_take_turns_and_reuse_its_buffers(fake_devices):
    batch = synthetic_batch(12, seed=4, max_lines=6, max_offers=5, pool=8)
    want = solve_packed(batch, device="cpu")
    first = _solve_on(fake_devices, 31, batch, "overlap")
    first.join(JOIN_S)
    device = kept_for(31)
    scratch = dict(device.scratch)
    arrays = dict(device.arrays)
    streams = list(device.streams)
    with device.lock:  # another batch's kernels run on device 31
        second = _solve_on(fake_devices, 31, batch, "overlap")
        second.join(1.0)
        assert second.is_alive(), "a second batch on device 31 did not wait for the first"
    second.join(JOIN_S)
    assert not second.is_alive()
    assert second.result is not None
    np.testing.assert_array_equal(second.result.total, want.total)
    # The same sizes again: the very same device arrays and streams served it.
    assert all(device.scratch[name] is held for name, held in scratch.items())
    assert all(device.arrays[name] is held for name, held in arrays.items())
    assert device.streams == streams
    # Another device solving the same batch gets arrays of its own.
    other = _solve_on(fake_devices, 32, batch, "overlap")
    other.join(JOIN_S)
    assert not other.is_alive()
    assert all(kept_for(32).scratch[name] is not held for name, held in scratch.items())
    assert all(kept_for(32).arrays[name] is not held for name, held in arrays.items())


@pytest.mark.cudasim
def test_release_gives_back_every_devices_state(fake_devices):
    from gpu_engine.batch import launch as batch_launch

    batch = synthetic_batch(6, seed=2, max_lines=5, max_offers=4, pool=6)
    for key in (41, 42):
        thread = _solve_on(fake_devices, key, batch, "overlap")
        thread.join(JOIN_S)
        assert not thread.is_alive()
    batch_launch.release_scratch()
    overlap.release()
    staging.release()
    for key in (41, 42):
        state = kept_for(key)
        assert not (state.scratch or state.arrays or state.streams or state.pinned)


@pytest.mark.parametrize(("layer", "turns"), [("omp", False), ("tbb", False), ("workqueue", True)])
def test_parallel_casts_take_turns_only_where_the_threading_layer_needs_it(
    monkeypatch, layer, turns
):
    monkeypatch.setattr(staging, "threading_layer", lambda: layer)
    with staging._parallel_turns():
        assert staging._workqueue_lock.locked() is turns
    assert not staging._workqueue_lock.locked()


@pytest.mark.slow  # compiles the parallel cast, which no other fast test runs (seconds)
def test_parallel_casts_take_turns_before_numba_has_chosen_a_layer(monkeypatch):
    monkeypatch.setattr(staging, "threading_layer", lambda: None)
    with staging._parallel_turns():
        assert staging._workqueue_lock.locked()
    # Past the turns, the cast itself is unchanged.
    values = np.arange(10, dtype=np.int64)
    target = np.empty(10, dtype=np.int32)
    assert staging._cast_parallel(values, target, -(2**31), 2**31 - 1)
    np.testing.assert_array_equal(target, values)


def test_the_casts_release_the_gil():
    # Two GPUs' host threads cast at once; one holding the GIL would stall the other's enqueues.
    assert staging._cast_parts.targetoptions["nogil"]
    assert staging._cast_serial.targetoptions["nogil"]


@pytest.mark.cudasim
def test_exit_hook_releases_every_devices_state_in_its_context_once(fake_devices, monkeypatch):
    """At exit every device's kept state is freed inside that device's context (numba's
    finalizers would otherwise free it during teardown, after the contexts); a second call
    frees nothing, and the hook is registered once, when the first state is made."""
    import contextlib

    from gpu_engine.batch import kept as kept_module

    registered = []
    monkeypatch.setattr(kept_module, "_exit_hook_registered", False)
    monkeypatch.setattr(kept_module.atexit, "register", registered.append)
    batch = synthetic_batch(40, seed=2, max_lines=4, max_offers=4, pool=8)
    for key in (0, 1):
        fake_devices.key = key
        solve_packed(batch, device="gpu", gpu_variant="overlap")
    fake_devices.key = 0
    assert registered == [kept_module.release_every_device]
    states = {key: kept_for(key) for key in (0, 1)}
    assert all(k.pinned and k.scratch for k in states.values())

    entered: list[int] = []

    @contextlib.contextmanager
    def context_of(key):
        entered.append(key)
        # What the kept state is cleared under: this device's context, its locks held.
        assert states[key].lock.locked() and states[key].stage_lock.locked()
        yield

    assert sorted(kept_module.release_every_device(context_of)) == [0, 1]
    assert sorted(entered) == [0, 1]
    for state in states.values():
        assert not (state.scratch or state.arrays or state.streams or state.pinned)
        assert not state.lock.locked() and not state.stage_lock.locked()
    assert kept_module.every_device() == []
    assert kept_module.release_every_device(context_of) == [] and len(entered) == 2


@pytest.mark.cudasim
def test_exit_hook_uses_the_simulators_device_context(fake_devices):
    from gpu_engine.batch import kept as kept_module

    solve_packed(synthetic_batch(20, seed=1, max_lines=3, max_offers=3, pool=6), device="gpu")
    state = kept_for(0)
    assert state.pinned
    assert kept_module.release_every_device() == [0]
    assert not state.pinned and not state.scratch
