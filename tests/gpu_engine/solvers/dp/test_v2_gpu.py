"""The GPU subset DP on version 2 carts: the host-built owner tables through version 1's layer
kernels, in the CUDA simulator at tiny sizes and on real hardware under the gpu marker."""

import time

import pytest

from gpu_engine import CartProblem, solve
from gpu_engine.fuzz.v2_carts import random_v2_cart
from gpu_engine.pricing import total_of
from gpu_engine.reference import reference_brute_force_v2
from gpu_engine.solvers.dp.cuda import LAYERS_PER_CHECK, run_owner_gpu
from gpu_engine.solvers.dp.owner_inputs import owner_dp_inputs
from gpu_engine.solvers.dp.solve_v2 import run_owner_cpu


@pytest.mark.cudasim
@pytest.mark.parametrize("seed", range(10))
def test_simulated_owner_dp_equals_brute_force_and_the_cpu(seed):
    cart = random_v2_cart(300 + seed, 3 + seed % 3)
    problem = CartProblem.from_dict(cart)
    best, _ = reference_brute_force_v2(cart)
    inputs = owner_dp_inputs(problem)
    layers_total, entries, _device = run_owner_gpu(inputs)
    choice = inputs.choice(problem.n_items, entries)
    assert layers_total + inputs.constant == best == total_of(problem, choice)
    cpu_total, _cpu_entries = run_owner_cpu(inputs)
    assert cpu_total == best
    solution = solve(problem, algorithm="gpu-dp")
    assert solution.total == best and solution.optimal


@pytest.mark.cudasim
def test_simulated_owner_dp_in_launches_of_a_few_layers_equals_one_launch():
    cart = random_v2_cart(77, 4, n_merchants=LAYERS_PER_CHECK + 3, offers=(3, 6))
    problem = CartProblem.from_dict(cart)
    inputs = owner_dp_inputs(problem)
    assert inputs.n_layers > LAYERS_PER_CHECK
    whole = run_owner_gpu(inputs)
    chunked = run_owner_gpu(inputs, at=time.perf_counter() + 3600)
    assert chunked is not None and chunked[0] == whole[0]
    assert run_owner_gpu(inputs, at=time.perf_counter() - 1) is None
    assert whole[0] + inputs.constant == reference_brute_force_v2(cart)[0]


@pytest.mark.cudasim
def test_simulated_cart_with_every_line_bound_needs_no_layer():
    cart = random_v2_cart(5, 3, n_merchants=1)
    problem = CartProblem.from_dict(cart)
    inputs = owner_dp_inputs(problem)
    assert inputs.n_layers == 0 and inputs.k == 0
    assert run_owner_gpu(inputs)[:2] == (0, [])
    solution = solve(problem, algorithm="gpu-dp")
    assert solution.total == reference_brute_force_v2(cart)[0] and solution.optimal


@pytest.mark.gpu
def test_real_gpu_owner_dp_matches_cpu():
    from gpu_engine.bench.v2_family import v2_uniform_cart

    for seed, shape in enumerate([(10, 4, 12), (14, 6, 30), (20, 10, 60)]):
        problem = CartProblem.from_dict(v2_uniform_cart(*shape, seed=seed))
        inputs = owner_dp_inputs(problem)
        cpu_total, _entries = run_owner_cpu(inputs)
        layers_total, entries, _device = run_owner_gpu(inputs)
        assert layers_total + inputs.constant == cpu_total
        assert total_of(problem, inputs.choice(problem.n_items, entries)) == cpu_total
        solution = solve(problem, algorithm="gpu-dp")
        assert solution.total == cpu_total and solution.optimal
