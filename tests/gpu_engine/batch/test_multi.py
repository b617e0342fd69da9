"""The batch split over several devices (issue 17): shares balanced by the plan's work, sliced
and merged so that the answers equal one device's, on the simulated kernel (one context, the
shares in turn) and with the CPU twin as the share solver in real host threads."""

import itertools
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_engine import CartProblem
from gpu_engine.batch import plan_batch, solve_batch, solve_packed
from gpu_engine.batch.engine import BatchResult, RawAnswers
from gpu_engine.batch.multi import (
    CART_OVERHEAD,
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
    assert sorted(d for d, _ in seen) == sorted(device_ids)
    assert sum(got.timings[f"share{i}_carts"] for i in range(len(device_ids))) == 600
    if len(device_ids) > 1:
        assert len({name for _, name in seen}) == len(device_ids)


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


def test_several_gpus_take_the_per_batch_scratch_until_the_kernel_keeps_it_per_device(
    monkeypatch,
):
    from gpu_engine.batch import cuda as batch_cuda
    from gpu_engine.batch.multi import FALLBACK_VARIANT, multi_device_variant

    assert multi_device_variant([0]) is None and multi_device_variant([1, 1]) is None
    monkeypatch.setattr(batch_cuda, "SCRATCH_PER_DEVICE", False, raising=False)
    assert multi_device_variant([0, 1]) == FALLBACK_VARIANT
    monkeypatch.setattr(batch_cuda, "SCRATCH_PER_DEVICE", True, raising=False)
    assert multi_device_variant([0, 1]) is None
