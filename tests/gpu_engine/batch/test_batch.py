"""Batch solver: every cart's answer equals the per-cart exact answer to the cent, on the CPU
twin and (tiny sizes) the CUDA kernel in the simulator; each exact method on every cart."""

import dataclasses
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_engine import CartProblem, price_assignment, solve
from gpu_engine.batch import BatchResult, pack_problems, plan_batch, solve_batch, solve_packed
from gpu_engine.batch.engine import resolve_batch_device, solve_problems
from gpu_engine.batch.pack import DP, FULL
from gpu_engine.batch.synthetic import cart_problem, synthetic_batch
from gpu_engine.reference import reference_brute_force, reference_cost
from tests.gpu_engine.strategies import carts

cart_lists = st.lists(carts(max_items=5, max_merchants=4), min_size=0, max_size=6)


def _assert_exact(dicts, result: BatchResult, device: str) -> None:
    assert result.device == device
    assert len(result.solutions) == len(dicts)
    for cart, solution in zip(dicts, result.solutions, strict=True):
        best, _ = reference_brute_force(cart)
        assert solution is not None
        assert solution.total == best
        assert reference_cost(cart, solution.assignment) == best
        assert solution.optimal and solution.gap == 0.0
        assert solution.breakdown == price_assignment(
            CartProblem.from_dict(cart), solution.assignment
        )


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(cart_lists, st.sampled_from([None, FULL, DP]))
def test_cpu_batch_equals_brute_force(dicts, prefer):
    problems = [CartProblem.from_dict(d) for d in dicts]
    _assert_exact(dicts, solve_problems(problems, device="cpu", prefer=prefer), "cpu")


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(st.lists(carts(max_items=6, max_merchants=5, max_quantity=4), min_size=1, max_size=4))
def test_cpu_batch_equals_the_per_cart_exact_solvers(dicts):
    problems = [CartProblem.from_dict(d) for d in dicts]
    result = solve_batch(problems, device="cpu")
    for problem, solution in zip(problems, result.solutions, strict=True):
        assert solution is not None
        assert solution.total == solve(problem, algorithm="cpu-full").total
        assert solution.total == solve(problem, algorithm="cpu-dp").total


@pytest.mark.cudasim
@settings(max_examples=8, deadline=None)
@given(st.lists(carts(max_items=4, max_merchants=3), min_size=1, max_size=3), st.booleans())
def test_simulated_kernel_matches_the_cpu_twin(dicts, use_dp):
    problems = [CartProblem.from_dict(d) for d in dicts]
    prefer = DP if use_dp else FULL
    gpu = solve_problems(problems, device="gpu", prefer=prefer)
    cpu = solve_problems(problems, device="cpu", prefer=prefer)
    _assert_exact(dicts, gpu, "gpu")
    for g, c in zip(gpu.solutions, cpu.solutions, strict=True):
        assert g is not None and c is not None
        # Same numbering and tie-break on both devices: the same assignment, not only total.
        assert (g.total, g.assignment, g.algorithm) == (c.total, c.assignment, c.algorithm)


def _cart(lines, merchants, offers):
    return {
        "items": [{"id": f"i{i}", "quantity": q} for i, q in enumerate(lines)],
        "merchants": [
            {
                "id": f"m{m}",
                "shipping": {"base_fee": base, "per_extra_unit": extra, "free_over": free},
                "discount": discount,
            }
            for m, (base, extra, free, discount) in enumerate(merchants)
        ],
        "offers": [
            {"item": f"i{i}", "merchant": f"m{m}", "price": price, "stock": stock}
            for i, m, price, stock in offers
        ],
    }


EDGE_CARTS = {
    "one line, one offer": _cart([2], [(499, 100, None, None)], [(0, 0, 1999, None)]),
    "one line, three offers": _cart(
        [1], [(499, 0, None, None)] * 3, [(0, 0, 900, None), (0, 1, 800, 1), (0, 2, 850, None)]
    ),
    "zero prices and fees": _cart(
        [1, 3], [(0, 0, None, None)] * 2, [(i, m, 0, None) for i in range(2) for m in range(2)]
    ),
    "ties everywhere": _cart(
        [1, 1, 1],
        [(299, 50, 5000, None)] * 3,
        [(i, m, 700, None) for i in range(3) for m in range(3)],
    ),
    "stock rules out the cheap offer": _cart(
        [3, 1], [(0, 0, None, None)] * 2, [(0, 0, 1, 2), (0, 1, 500, 3), (1, 0, 100, None)]
    ),
    "discount and free shipping pull lines together": _cart(
        [1, 1, 1],
        [(800, 900, 3000, {"min_units": 3, "basis_points": 1000}), (0, 0, None, None)],
        [(i, 0, 1100, None) for i in range(3)] + [(i, 1, 1050, None) for i in range(3)],
    ),
    "single-line merchants, one dominated, two tied": _cart(
        [1, 2],
        [(499, 0, None, None), (0, 0, None, None), (0, 0, None, None), (100, 0, None, None)],
        [
            (0, 0, 900, None),
            (1, 0, 900, None),
            (0, 1, 1000, None),
            (0, 2, 1000, None),
            (1, 3, 800, None),
        ],
    ),
}


def test_dominated_single_line_merchants_are_left_out_of_the_dp():
    problem = CartProblem.from_dict(EDGE_CARTS["single-line merchants, one dominated, two tied"])
    plan = plan_batch(pack_problems([problem]))
    # m1 and m2 sell only line 0 and ship it alone for the same 1000: the lower index stays.
    assert plan.skip.tolist() == [0, 0, 1, 0]


# The kernel runs in the simulator here; the id must not be "gpu", which is a marker name.
DEVICES = pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", id="simulated-kernel")])


@DEVICES
@pytest.mark.parametrize("prefer", [None, FULL, DP])
def test_edge_carts_in_one_batch(device, prefer):
    dicts = list(EDGE_CARTS.values())
    problems = [CartProblem.from_dict(d) for d in dicts]
    _assert_exact(dicts, solve_problems(problems, device=device, prefer=prefer), device)


@DEVICES
def test_an_empty_batch(device):
    result = solve_batch([], device=device)
    assert result.solutions == [] and result.device == device and result.elapsed_ms >= 0


def test_carts_too_large_come_back_as_none_in_place():
    big = _cart(
        [1] * 20,
        [(499, 100, 5000, None)] * 3,
        [(i, m, 100 + i + m, None) for i in range(20) for m in range(3)],
    )
    small = EDGE_CARTS["ties everywhere"]
    result = solve_batch([CartProblem.from_dict(d) for d in (small, big, small)], device="cpu")
    first, middle, last = result.solutions
    assert middle is None
    assert first is not None and last is not None
    assert first.total == last.total == reference_brute_force(small)[0]


def test_auto_never_picks_the_simulator():
    assert resolve_batch_device("auto") == "cpu"
    with pytest.raises(ValueError):
        resolve_batch_device("tpu")


def test_importing_the_batch_solver_touches_no_cuda():
    code = (
        "import sys, gpu_engine.batch, gpu_engine.batch.cpu, gpu_engine.batch.pack;"
        "print('numba.cuda' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"


@pytest.mark.cudasim
def test_simulated_kernel_matches_the_cpu_twin_on_synthetic_carts():
    batch = synthetic_batch(40, seed=3, max_lines=6, max_offers=6, pool=8)
    gpu = solve_packed(batch, device="gpu")
    cpu = solve_packed(batch, device="cpu")
    assert set(cpu.plan.method.tolist()) == {FULL, DP}
    np.testing.assert_array_equal(gpu.total, cpu.total)
    np.testing.assert_array_equal(gpu.choice, cpu.choice)
    for c in range(batch.n_carts):
        assert solve(cart_problem(batch, c), algorithm="cpu-full").total == cpu.total[c]


@pytest.mark.cudasim
@settings(max_examples=10, deadline=None)
@given(st.lists(carts(max_items=5, max_merchants=4), min_size=1, max_size=5))
def test_simulated_plan_kernel_matches_the_cpu_plan(dicts):
    from gpu_engine.batch.gpu import solve_gpu

    batch = pack_problems([CartProblem.from_dict(d) for d in dicts])
    cpu = plan_batch(batch)
    _total, _choice, gpu = solve_gpu(batch)
    for name in ("method", "complexity", "work", "ws_ptr", "pick_ptr", "skip"):
        np.testing.assert_array_equal(getattr(gpu, name), getattr(cpu, name), err_msg=name)


@pytest.mark.cudasim
def test_every_simulated_kernel_variant_matches_the_cpu_twin(monkeypatch):
    from gpu_engine.batch import cuda as batch_cuda
    from gpu_engine.batch import launch as batch_launch
    from gpu_engine.bench.batch_variants import VARIANTS

    batch = synthetic_batch(24, seed=3, max_lines=7, max_offers=6, pool=8)
    cpu = solve_packed(batch, device="cpu")
    # Tiers low enough that these small carts fill both, and the light launch too.
    monkeypatch.setattr(batch_cuda, "TIERS", ((2000, 8), (300, 4)))
    assert (cpu.plan.work >= 2000).any() and ((cpu.plan.work >= 300) & (cpu.plan.work < 2000)).any()
    for variant in VARIANTS:
        gpu = solve_packed(batch, device="gpu", gpu_variant=variant)
        np.testing.assert_array_equal(gpu.total, cpu.total, err_msg=variant)
        np.testing.assert_array_equal(gpu.choice, cpu.choice, err_msg=variant)
    # The scratch kept from one batch serves the next (the simulator's one device's).
    from gpu_engine.batch.kept import kept_for

    assert kept_for(0).scratch
    batch_launch.release_scratch()


@pytest.mark.cudasim
def test_values_that_do_not_fit_the_narrow_types_travel_wide():
    from gpu_engine.batch import staging

    batch = synthetic_batch(6, seed=2, max_lines=4, max_offers=4, pool=6)
    amount = batch.offer_amount.copy()
    amount[1] = 1 << 40
    wide = dataclasses.replace(batch, offer_amount=amount)
    device = staging.upload({"offer_amount": amount, "line_qty": batch.line_qty})
    assert device["offer_amount"].dtype == np.int64 and device["line_qty"].dtype == np.int32
    np.testing.assert_array_equal(device["offer_amount"].copy_to_host(), amount)
    cpu = solve_packed(wide, device="cpu")
    gpu = solve_packed(wide, device="gpu")
    np.testing.assert_array_equal(gpu.total, cpu.total)
    np.testing.assert_array_equal(gpu.choice, cpu.choice)


@pytest.mark.cudasim
def test_every_simulated_variant_leaves_too_large_carts_at_minus_one():
    from gpu_engine.batch import gpu as batch_gpu
    from gpu_engine.batch.pack import TOO_LARGE
    from gpu_engine.bench.batch_variants import VARIANTS

    batch = synthetic_batch(8, seed=4, max_lines=6, max_offers=5, pool=8)
    for variant in VARIANTS:
        total, _choice, plan = batch_gpu.solve_gpu(batch, max_work=200, variant=variant)
        assert (plan.method == TOO_LARGE).any() and (plan.method != TOO_LARGE).any()
        assert (total[plan.method == TOO_LARGE] == -1).all(), variant
        assert (total[plan.method != TOO_LARGE] > 0).all(), variant


@pytest.mark.cudasim
def test_simulated_overlap_chunks_give_the_cpu_twins_answers(monkeypatch):
    from gpu_engine.batch import cuda as batch_cuda
    from gpu_engine.batch import gpu as batch_gpu
    from gpu_engine.batch import launch as batch_launch
    from gpu_engine.batch import overlap
    from gpu_engine.batch.engine import _solve_cpu
    from gpu_engine.batch.pack import TOO_LARGE

    batch = synthetic_batch(30, seed=5, max_lines=7, max_offers=6, pool=8)
    # A value too wide for int32 in the last chunk only: the batch starts again with it wide.
    amount = batch.offer_amount.copy()
    amount[-1] = 1 << 40
    batch = dataclasses.replace(batch, offer_amount=amount)
    monkeypatch.setattr(batch_cuda, "TIERS", ((2000, 8), (300, 4)))
    monkeypatch.setattr(overlap, "CHUNKS", 4)
    bounds = overlap.chunk_bounds(batch, 4)
    assert bounds.tolist()[0] == 0 and bounds.tolist()[-1] == 30 and bounds.size == 5
    plan = plan_batch(batch, max_work=3000)
    assert (plan.method == TOO_LARGE).any() and (plan.method == DP).any()
    assert (plan.work >= 2000).any() and ((plan.work >= 300) & (plan.work < 2000)).any()
    total, choice = _solve_cpu(batch, plan)
    timings: dict[str, float] = {}
    gpu_total, gpu_choice, gpu_plan = batch_gpu.solve_gpu(
        batch, max_work=3000, timings=timings, variant="overlap"
    )
    assert timings["chunks"] == 4 and timings["in_offer_amount_mb"] == amount.nbytes / 1e6
    np.testing.assert_array_equal(gpu_total, total)
    np.testing.assert_array_equal(gpu_choice, choice)
    for name in ("method", "complexity", "work", "ws_ptr", "pick_ptr", "skip"):
        np.testing.assert_array_equal(getattr(gpu_plan, name), getattr(plan, name), err_msg=name)
    # The same arrays, kept, serve a smaller batch next (views of the first one's).
    small = synthetic_batch(9, seed=6, max_lines=6, max_offers=5, pool=8)
    cpu = solve_packed(small, device="cpu")
    gpu = solve_packed(small, device="gpu", gpu_variant="overlap")
    np.testing.assert_array_equal(gpu.total, cpu.total)
    np.testing.assert_array_equal(gpu.choice, cpu.choice)
    overlap.release()
    batch_launch.release_scratch()


def test_overlap_chunks_cover_the_batch_in_order():
    from gpu_engine.batch.overlap import chunk_bounds

    batch = synthetic_batch(50, seed=1)
    for chunks in (1, 4, 8, 80):
        bounds = chunk_bounds(batch, chunks)
        assert bounds[0] == 0 and bounds[-1] == 50 and (np.diff(bounds) > 0).all()
        assert bounds.size - 1 <= chunks


def test_pack_problems_writes_the_csr_format_byte_for_byte():
    """The format every builder shares (``pack_carts``), pinned on two copies of the warm-up
    cart: types, offsets, candidate order (by unit price), amounts and one pricing row each."""
    from gpu_engine import WARMUP_CART

    batch = pack_problems([CartProblem.from_dict(WARMUP_CART)] * 2)
    want = {
        "line_ptr": (np.int64, [0, 3, 6]),
        "line_qty": (np.int64, [2, 1, 3] * 2),
        "offer_ptr": (np.int64, [0, 2, 4, 6, 8, 10, 12]),
        "offer_merchant": (np.int32, [0, 1, 1, 0, 0, 1] * 2),
        "offer_amount": (np.int64, [3998, 4200, 450, 500, 2997, 3600] * 2),
        "merch_ptr": (np.int64, [0, 2, 4]),
        "merch_row": (np.int32, [0, 1, 2, 3]),
        "base": (np.int64, [499, 299] * 2),
        "extra": (np.int64, [100, 0] * 2),
        "free_over": (np.int64, [5000, -1] * 2),
        "dmin": (np.int64, [3, 0] * 2),
        "dbp": (np.int64, [500, 0] * 2),
        "merchant_index": (np.int64, [0, 1] * 2),
    }
    assert set(want) == set(batch.__dataclass_fields__)
    for name, (dtype, values) in want.items():
        got = getattr(batch, name)
        assert got.dtype == dtype and got.flags.c_contiguous, name
        assert got.tobytes() == np.array(values, dtype=dtype).tobytes(), name


def test_pack_carts_shares_pricing_rows_between_carts():
    from gpu_engine.batch import pack_carts

    params = np.array([[499, 0], [100, 0], [5000, -1], [0, 2], [0, 300]])
    batch = pack_carts(
        line_counts=np.array([1, 2]),
        line_qty=np.array([2, 1, 3]),
        offer_counts=np.array([2, 1, 2]),
        offer_merchant=np.array([0, 1, 0, 0, 1]),
        offer_price=np.array([700, 650, 90, 100, 80]),
        merchant_counts=np.array([2, 2]),
        merchant_row=np.array([0, 1, 1, 0]),
        merchant_index=np.array([0, 1, 1, 0]),
        params=params,
    )
    assert batch.offer_amount.tolist() == [1400, 1300, 90, 300, 240]
    assert batch.line_ptr.tolist() == [0, 1, 3] and batch.merch_ptr.tolist() == [0, 2, 4]
    assert batch.base.tolist() == [499, 0] and batch.merch_row.dtype == np.int32
    cpu = solve_packed(batch, device="cpu")
    for c in range(batch.n_carts):
        assert solve(cart_problem(batch, c), algorithm="cpu-full").total == cpu.total[c]
