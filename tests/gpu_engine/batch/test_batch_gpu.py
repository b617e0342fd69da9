"""Batch solver on real hardware: the kernel equals the CPU twin on thousands of synthetic
carts, and a sample equals the per-cart exact solver."""

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
