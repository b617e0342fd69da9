"""The version 2 batch's CUDA kernel: in Numba's simulator at tiny sizes (against the CPU twin,
index for index, and the spec's brute force), and on a real GPU under the gpu marker."""

import numpy as np
import pytest

from gpu_engine import CartProblem
from gpu_engine.batch import solve_batch
from gpu_engine.batch.engine import solve_problems
from gpu_engine.batch.pack import MAX_WORK, TOO_LARGE
from gpu_engine.batch.v2 import solve_v2
from gpu_engine.batch.v2_pack import MAX_V2_COLUMNS, MAX_V2_OWNERS
from gpu_engine.fuzz.v2_carts import random_v2_cart
from gpu_engine.reference import reference_brute_force_v2, reference_cost_v2
from tests.gpu_engine.batch.test_v2_cpu import simple_cart, wide_cart
from tests.gpu_engine.solvers.full import v2_cases


def _same(gpu, cpu) -> None:
    np.testing.assert_array_equal(gpu.method, cpu.method)
    np.testing.assert_array_equal(gpu.total, cpu.total)
    np.testing.assert_array_equal(gpu.choice, cpu.choice)


@pytest.mark.cudasim
def test_kernel_equals_the_cpu_twin_and_the_brute_force():
    carts = [
        v2_cases.tier_tipping_cart(),
        v2_cases.two_node_threshold_cart(),
        v2_cases.tied_cart(),
        v2_cases.limit_cart(),
        v2_cases.small_v2_cart(5, 4),
        v2_cases.small_v2_cart(6, 3, cents=1),
        wide_cart(1, MAX_V2_COLUMNS),  # a thread's state full
        wide_cart(MAX_V2_OWNERS, 1),
    ]
    problems = [CartProblem.from_dict(cart) for cart in carts]
    gpu = solve_v2(problems, where="gpu")
    _same(gpu, solve_v2(problems, where="cpu"))
    for c, cart in enumerate(carts):
        assert gpu.total[c] == reference_brute_force_v2(cart)[0]


@pytest.mark.cudasim
def test_kernel_on_seeded_small_carts_equals_the_brute_force():
    carts = [
        v2_cases.small_v2_cart(seed, 3 + seed % 2, cents=(1, 100)[seed % 2]) for seed in range(8)
    ]
    problems = [CartProblem.from_dict(cart) for cart in carts]
    result = solve_batch(problems, device="gpu")
    assert result.device == "gpu"
    for cart, solution in zip(carts, result.solutions, strict=True):
        best, _ = reference_brute_force_v2(cart)
        assert solution is not None and solution.total == best
        assert (
            reference_cost_v2(
                cart, {k: (m, solution.nodes[k]) for k, m in solution.assignment.items()}
            )
            == best
        )


@pytest.mark.cudasim
def test_mixed_batch_on_the_simulated_device():
    carts = [simple_cart(1, 3), v2_cases.small_v2_cart(2, 3), v2_cases.two_node_threshold_cart()]
    problems = [CartProblem.from_dict(cart) for cart in carts]
    gpu = solve_problems(problems, device="gpu")
    cpu = solve_problems(problems, device="cpu")
    assert gpu.device == "gpu"
    assert [(s.total, s.assignment, s.nodes, s.breakdown) for s in gpu.solutions] == [
        (s.total, s.assignment, s.nodes, s.breakdown) for s in cpu.solutions
    ]
    assert [s.device for s in gpu.solutions] == ["gpu"] * 3


@pytest.mark.cudasim
def test_too_large_carts_leave_the_kernel_alone():
    big = CartProblem.from_dict(random_v2_cart(3, 24, offers=(3, 4)))
    small = CartProblem.from_dict(v2_cases.tied_cart())
    gpu = solve_v2([big, small, big], where="gpu")
    assert gpu.method.tolist()[::2] == [TOO_LARGE, TOO_LARGE]
    _same(gpu, solve_v2([big, small, big], where="cpu"))
    assert solve_batch([big], device="gpu").solutions == [None]


@pytest.mark.gpu
def test_v2_batch_on_the_device_equals_the_cpu_twin():
    carts = [random_v2_cart(seed, 3 + seed % 8, max_nodes=3) for seed in range(3000)]
    carts += [random_v2_cart(seed, 20, offers=(3, 4)) for seed in range(5)]  # too large
    problems = [CartProblem.from_dict(cart) for cart in carts]
    gpu = solve_v2(problems, where="gpu")
    cpu = solve_v2(problems, where="cpu")
    _same(gpu, cpu)
    too_large = [p.complexity * p.n_items > MAX_WORK for p in problems]
    assert any(too_large)
    assert ((gpu.method == TOO_LARGE) == np.array(too_large)).all()
    result = solve_batch(problems, device="gpu")
    assert result.device == "gpu"
    for c in range(0, 3000, 300):
        if problems[c].complexity <= v2_cases.MAX_BRUTE:
            assert result.solutions[c].total == reference_brute_force_v2(carts[c])[0]


@pytest.mark.gpu
def test_mixed_batch_on_the_device_answers_as_the_cpu():
    carts = [simple_cart(seed, 3 + seed % 6) for seed in range(200)]
    carts += [random_v2_cart(seed, 3 + seed % 6) for seed in range(200)]
    problems = [CartProblem.from_dict(cart) for cart in carts]
    gpu = solve_batch(problems, device="gpu")
    cpu = solve_batch(problems, device="cpu")
    assert gpu.device == "gpu"
    assert [s and (s.total, s.assignment, s.nodes) for s in gpu.solutions] == [
        s and (s.total, s.assignment, s.nodes) for s in cpu.solutions
    ]
