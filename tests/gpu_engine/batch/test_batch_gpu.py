"""Batch solver on real hardware: the kernel equals the CPU twin on thousands of synthetic
carts, and a sample equals the per-cart exact solver."""

import dataclasses

import numpy as np
import pytest

from gpu_engine import solve
from gpu_engine.batch import solve_packed
from gpu_engine.batch.synthetic import cart_problem, synthetic_batch


@pytest.mark.gpu
def test_gpu_batch_matches_the_cpu_twin_and_the_per_cart_solver():
    batch = synthetic_batch(20_000, seed=7)
    gpu = solve_packed(batch, device="gpu")
    cpu = solve_packed(batch, device="cpu")
    assert gpu.device == "gpu" and cpu.device == "cpu"
    np.testing.assert_array_equal(gpu.plan.method, cpu.plan.method)
    np.testing.assert_array_equal(gpu.total, cpu.total)
    np.testing.assert_array_equal(gpu.choice, cpu.choice)
    for c in range(0, batch.n_carts, 200):
        assert solve(cart_problem(batch, c), algorithm="dp").total == gpu.total[c]


@pytest.mark.gpu
def test_every_gpu_variant_gives_the_cpu_twins_answers():
    from gpu_engine.batch.cuda import TIERS
    from gpu_engine.bench.batch_variants import VARIANTS

    # Enough carts for both heavy tiers of the split variants (about 0.3% above 2^20 steps
    # unpruned; pruned, the heaviest estimate falls below the top tier's floor).
    batch = synthetic_batch(20_000, seed=11)
    for prune in (False, True):
        cpu = solve_packed(batch, device="cpu", prune=prune)
        if not prune:
            assert (cpu.plan.work >= TIERS[0][0]).any()
        for variant in VARIANTS:
            gpu = solve_packed(batch, device="gpu", gpu_variant=variant, prune=prune)
            np.testing.assert_array_equal(gpu.total, cpu.total, err_msg=f"{variant} {prune}")
            np.testing.assert_array_equal(gpu.choice, cpu.choice, err_msg=f"{variant} {prune}")


@pytest.mark.gpu
def test_a_value_too_wide_to_narrow_travels_wide():
    from gpu_engine.batch.gpu import DEFAULT_VARIANT

    batch = synthetic_batch(2_000, seed=5)
    amount = batch.offer_amount.copy()
    amount[7] = 1 << 40  # no real price, but the kernel must still read it whole
    wide = dataclasses.replace(batch, offer_amount=amount)
    cpu = solve_packed(wide, device="cpu")
    gpu = solve_packed(wide, device="gpu", gpu_variant=DEFAULT_VARIANT)
    np.testing.assert_array_equal(gpu.total, cpu.total)
    np.testing.assert_array_equal(gpu.choice, cpu.choice)


@pytest.mark.gpu
def test_overlap_chunks_with_too_large_carts_give_the_cpu_twins_answers():
    from gpu_engine.batch.engine import _solve_cpu
    from gpu_engine.batch.gpu import solve_gpu
    from gpu_engine.batch.pack import TOO_LARGE, plan_batch

    batch = synthetic_batch(30_000, seed=13)
    plan = plan_batch(batch, max_work=1 << 16)
    assert (plan.method == TOO_LARGE).any()
    total, choice = _solve_cpu(batch, plan)
    for _ in range(2):  # the second batch runs on the arrays the first one kept
        timings: dict[str, float] = {}
        gpu_total, gpu_choice, gpu_plan = solve_gpu(
            batch, max_work=1 << 16, timings=timings, variant="overlap"
        )
        assert timings["chunks"] > 1
        np.testing.assert_array_equal(gpu_total, total)
        np.testing.assert_array_equal(gpu_choice, choice)
        np.testing.assert_array_equal(gpu_plan.ws_ptr, plan.ws_ptr)
