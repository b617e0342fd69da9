"""The batch split over several devices (issues 17 and 30): guided chunks taken by whichever
device is free, sliced and merged so that the answers equal one device's, on the simulated
kernel (one context, the chunks in turn; fake device keys for the per-device kept state), with
the CPU twin as the share solver in real host threads, and on two real GPUs (gpu-marked,
skipped with fewer)."""

import itertools
import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_engine import CartProblem
from gpu_engine.batch import plan_batch, solve_batch, solve_packed
from gpu_engine.batch.engine import BatchResult, RawAnswers
from gpu_engine.batch.multi import (
    CART_OVERHEAD,
    estimated_work,
    guided_cuts,
    share_cuts,
    slice_batch,
    solve_batch_multi,
)
from gpu_engine.batch.pack import PackedBatch, pack_problems
from gpu_engine.batch.synthetic import synthetic_batch
from tests.gpu_engine.strategies import carts


def _cpu_share(share: PackedBatch, device_id: int) -> RawAnswers:
    return solve_packed(share, device="cpu")


def _assert_same(got: RawAnswers, want: RawAnswers) -> None:
    np.testing.assert_array_equal(got.total, want.total)
    np.testing.assert_array_equal(got.choice, want.choice)
    for field in ("method", "complexity", "work", "ws_ptr", "pick_ptr", "skip"):
        np.testing.assert_array_equal(getattr(got.plan, field), getattr(want.plan, field))


@pytest.mark.parametrize("device_ids", [[0], [0, 0], [0, 1, 2], [3] * 7])
def test_cpu_shares_in_threads_equal_one_device(device_ids):
    batch = synthetic_batch(600, seed=5, max_lines=9, max_offers=8, pool=40)
    want = solve_packed(batch, device="cpu")
    seen: list[tuple[int, str]] = []

    def share_solver(share, device_id):
        seen.append((device_id, threading.current_thread().name))
        return _cpu_share(share, device_id)

    got = solve_batch_multi(batch, device_ids=device_ids, share_solver=share_solver)
    _assert_same(got, want)
    assert {d for d, _ in seen} <= set(device_ids)
    assert sum(got.timings[f"share{i}_carts"] for i in range(len(device_ids))) == 600
    assert sum(got.timings[f"share{i}_chunks"] for i in range(len(device_ids))) == len(seen)
    assert got.timings.get("chunks", 1.0) == len(seen)
    if len(device_ids) > 1:
        assert len({name for _, name in seen}) <= len(device_ids)


@pytest.mark.cudasim
def test_simulated_kernel_split_over_two_contexts_equals_one_device():
    batch = synthetic_batch(30, seed=3, max_lines=6, max_offers=6, pool=8)
    want = solve_packed(batch, device="gpu")
    got = solve_batch_multi(batch, device_ids=[0, 0])
    assert got.device == "gpu"
    _assert_same(got, want)
    np.testing.assert_array_equal(got.total, solve_packed(batch, device="cpu").total)


def test_shares_are_balanced_by_predicted_work():
    work = np.array([0, 0, 10_000, 0, 0, 0, 10_000, 0], dtype=np.int64)
    cuts = share_cuts(work, 2)
    weights = work + CART_OVERHEAD
    shares = [int(weights[a:b].sum()) for a, b in itertools.pairwise(cuts)]
    assert cuts.tolist() == [0, 4, 8] and shares[0] == shares[1]
    # Few heavy carts among many light ones: each share gets one heavy cart.
    work = np.zeros(1000, dtype=np.int64)
    work[[10, 20, 30, 40]] = 1_000_000
    cuts = share_cuts(work, 4)
    assert [int((work[a:b] > 0).sum()) for a, b in itertools.pairwise(cuts)] == [
        1,
        1,
        1,
        1,
    ]
    assert share_cuts(np.zeros(0, dtype=np.int64), 3).tolist() == [0, 0, 0, 0]
    assert share_cuts(np.zeros(2, dtype=np.int64), 4).tolist()[-1] == 2


def test_guided_chunks_shrink_cover_every_cart_and_keep_order():
    for n, devices in ((1_000_000, 2), (1_000_000, 4), (3, 4), (1, 2), (50, 3)):
        cuts = guided_cuts(np.zeros(n), devices)
        sizes = np.diff(cuts)
        assert cuts[0] == 0 and cuts[-1] == n and (sizes > 0).all()
        assert (np.diff(sizes[:-1]) <= 0).all(), "chunks never grow (the last takes the rest)"
    assert guided_cuts(np.zeros(0), 2).tolist() == [0]
    # Heavy carts at the end get chunks of their own.
    work = np.zeros(1000)
    work[-10:] = 1e6
    cuts = guided_cuts(work, 2)
    heavy_per_chunk = [int((work[a:b] > 0).sum()) for a, b in itertools.pairwise(cuts)]
    assert max(heavy_per_chunk) <= 3 and np.diff(cuts)[-3:].tolist() == [1, 1, 1]


def test_estimated_work_grows_with_free_lines_and_offers():
    batch = synthetic_batch(200, seed=4, max_lines=9, max_offers=8, pool=30)
    work = estimated_work(batch)
    per_line = np.diff(batch.offer_ptr)
    for c in (0, 57, 199):
        lines = per_line[batch.line_ptr[c] : batch.line_ptr[c + 1]]
        assert work[c] == lines.sum() * 2.0 ** int((lines > 1).sum())


def test_a_slow_device_gets_fewer_carts_and_the_answers_stay_the_same():
    """Chunks go to whichever device is free: a device ten times slower ends with fewer carts,
    and the merged answers are still one device's."""
    batch = synthetic_batch(2_000, seed=6, max_lines=6, max_offers=5, pool=30)
    want = solve_packed(batch, device="cpu")

    def uneven(share, device_id):
        time.sleep(share.n_carts * (1e-4 if device_id == 1 else 1e-5))
        return _cpu_share(share, device_id)

    got = solve_batch_multi(batch, device_ids=[0, 1], share_solver=uneven)
    _assert_same(got, want)
    assert got.timings["share0_carts"] > 2 * got.timings["share1_carts"]


def test_a_failing_chunk_raises_in_the_caller():
    batch = synthetic_batch(500, seed=2, max_lines=5, max_offers=4, pool=20)
    calls = itertools.count()

    def broken(share, device_id):
        if next(calls) == 2:
            raise RuntimeError("a device was lost")
        return _cpu_share(share, device_id)

    with pytest.raises(RuntimeError, match="a device was lost"):
        solve_batch_multi(batch, device_ids=[0, 1], share_solver=broken)


def test_a_slice_is_a_batch_of_its_own():
    batch = synthetic_batch(50, seed=9, max_lines=7, pool=20)
    whole = plan_batch(batch)
    part = slice_batch(batch, 17, 33)
    assert part.n_carts == 16 and part.line_ptr[0] == 0 and part.merch_ptr[0] == 0
    assert part.base.size <= batch.base.size
    np.testing.assert_array_equal(plan_batch(part).work, whole.work[17:33])
    np.testing.assert_array_equal(
        solve_packed(part, device="cpu").total, solve_packed(batch, device="cpu").total[17:33]
    )


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(
    st.lists(carts(max_items=5, max_merchants=4), min_size=0, max_size=8),
    st.lists(st.integers(0, 3), min_size=1, max_size=5),
)
def test_problems_split_equal_solve_batch(dicts, device_ids):
    problems = [CartProblem.from_dict(d) for d in dicts]
    got = solve_batch_multi(problems, device_ids=device_ids, share_solver=_cpu_share)
    want = solve_batch(problems, device="cpu")
    assert isinstance(got, BatchResult)
    assert [s and (s.total, s.assignment, s.breakdown) for s in got.solutions] == [
        s and (s.total, s.assignment, s.breakdown) for s in want.solutions
    ]
    # Each problem's own pricing rows: a share keeps only the span its merchants use.
    packed = pack_problems(problems)
    if packed.n_carts:
        assert slice_batch(packed, 0, 1).base.size == int(packed.merch_ptr[1])


def test_no_devices_is_an_error():
    with pytest.raises(ValueError):
        solve_batch_multi(synthetic_batch(3, seed=1), device_ids=[])


@pytest.mark.gpu
def test_gpu_split_over_every_visible_gpu_equals_one_gpu():
    from numba import cuda

    batch = synthetic_batch(50_000, seed=11)
    want = solve_packed(batch, device="gpu")
    everyone = list(range(len(cuda.gpus)))
    for ids in ([0], [0, 0], everyone, everyone * 2):
        got = solve_batch_multi(batch, device_ids=ids)
        assert got.device == "gpu"
        _assert_same(got, want)


@pytest.mark.cudasim
@pytest.mark.parametrize("overlap_min", [1, 10**9])
def test_shares_on_two_devices_run_the_engines_variant_on_state_of_their_own(
    monkeypatch, fake_devices, overlap_min
):
    """Shares on devices 5 and 6 (fake keys; the simulator's one context underneath) run the
    variant the engine picks for their size ("overlap" when the threshold is 1, "split-warp"
    above it), each on its own device's kept buffers, and answer as one device does."""
    from gpu_engine.batch import gpu as batch_gpu
    from gpu_engine.batch import multi
    from gpu_engine.batch.kept import kept_for
    from gpu_engine.bench.batch_variants import BASELINE

    batch = synthetic_batch(16, seed=8, max_lines=6, max_offers=5, pool=8)
    # One device's answers ("baseline" keeps nothing, so device 0's state stays empty).
    want = solve_packed(batch, device="gpu", gpu_variant=BASELINE)
    monkeypatch.setattr(batch_gpu, "OVERLAP_MIN_CARTS", overlap_min)
    real = multi.solve_share_on_gpu

    def on_fake_device(share, device_id):
        fake_devices.key = device_id
        return real(share, 0)

    monkeypatch.setattr(multi, "solve_share_on_gpu", on_fake_device)
    got = solve_batch_multi(batch, device_ids=[5, 6])
    _assert_same(got, want)
    assert got.timings["share0_carts"] > 0 and got.timings["share1_carts"] > 0
    five, six = kept_for(5), kept_for(6)
    assert {"ws", "pick"} <= set(five.scratch) and {"ws", "pick"} <= set(six.scratch)
    assert five.scratch["ws"] is not six.scratch["ws"]
    overlap_ran = bool(five.arrays) and bool(six.arrays)
    assert overlap_ran is (overlap_min == 1)
    assert not (kept_for(0).scratch or kept_for(0).arrays), "nothing landed on device 0"


def _real_gpus(n: int) -> list[int]:
    from numba import cuda

    if len(cuda.gpus) < n:
        pytest.skip(f"needs {n} GPUs, {len(cuda.gpus)} visible")
    return list(range(n))


def _owner(device_array) -> int:
    """The id of the device whose context allocated ``device_array``."""
    return int(device_array.gpu_data.context.device.id)


@pytest.mark.gpu
@pytest.mark.parametrize("overlap_min", [5_000, 10**9])
def test_two_gpus_split_equals_one_gpu_on_buffers_of_their_own(monkeypatch, overlap_min):
    from numba import cuda

    from gpu_engine.batch import gpu as batch_gpu
    from gpu_engine.batch import launch as batch_launch
    from gpu_engine.batch import overlap
    from gpu_engine.batch.kept import kept_for

    ids = _real_gpus(2)
    batch_launch.release_scratch()
    overlap.release()
    # The first chunks (15k, 11k, 8k carts) run "overlap" under the lowered threshold,
    # "split-warp" above it.
    monkeypatch.setattr(batch_gpu, "OVERLAP_MIN_CARTS", overlap_min)
    batch = synthetic_batch(60_000, seed=13)
    with cuda.gpus[0]:
        want = solve_packed(batch, device="gpu")
    got = solve_batch_multi(batch, device_ids=ids)
    _assert_same(got, want)
    for device_id in ids:
        kept = kept_for(device_id)
        held = [*kept.scratch.values(), *kept.arrays.values()]
        assert held and {_owner(a) for a in held} == {device_id}
    assert bool(kept_for(1).arrays) is (overlap_min == 5_000)


@pytest.mark.gpu
def test_a_batch_on_gpu_1_never_waits_for_gpu_0s_locks():
    from numba import cuda

    from gpu_engine.batch.kept import kept_for

    _real_gpus(2)
    batch = synthetic_batch(20_000, seed=14)
    with cuda.gpus[0]:
        want = solve_packed(batch, device="gpu", gpu_variant="overlap")
    answers: list[RawAnswers] = []

    def on_gpu_1() -> None:
        with cuda.gpus[1]:
            answers.append(solve_packed(batch, device="gpu", gpu_variant="overlap"))

    busy = kept_for(0)
    with busy.lock, busy.stage_lock:  # as if GPU 0's kernels ran the whole time
        thread = threading.Thread(target=on_gpu_1, daemon=True)
        thread.start()
        thread.join(120)
        assert not thread.is_alive(), "GPU 1's batch waited for GPU 0's lock"
    np.testing.assert_array_equal(answers[0].total, want.total)
    np.testing.assert_array_equal(answers[0].choice, want.choice)


def test_share_threads_run_on_their_share_of_the_callers_host_threads():
    """numba's thread count is per thread: each share thread takes ``callers // shares`` (at
    least 1), and the caller's own count is what it was afterwards."""
    import numba

    from gpu_engine.batch.threads import threads_limited

    batch = synthetic_batch(90, seed=3, max_lines=5, max_offers=4, pool=12)
    pool = int(numba.config.NUMBA_NUM_THREADS)
    for caller, shares in ((pool, 2), (pool, 3), (1, 2)):
        seen: list[tuple[int, int]] = []

        def share_solver(share, device_id, seen=seen):
            seen.append((device_id, numba.get_num_threads()))
            return _cpu_share(share, device_id)

        with threads_limited(caller):
            solve_batch_multi(batch, device_ids=list(range(shares)), share_solver=share_solver)
            assert numba.get_num_threads() == caller
        assert {d for d, _ in seen} <= set(range(shares))
        # A new thread would start at numba's default (the pool): the caller's 1 must carry.
        assert {n for _, n in seen} == {max(1, caller // shares)}
    assert numba.get_num_threads() == pool
