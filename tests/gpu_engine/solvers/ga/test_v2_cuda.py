"""The GA's version 2 kernels against their CPU twin (:mod:`gpu_engine.solvers.ga.cpu_v2`):
the same populations, bit for bit, in the simulator on tiny carts; on the lent GPU at real sizes,
with the GPU GA's answers against brute force."""

import numpy as np
import pytest

from gpu_engine import CartProblem
from gpu_engine.fuzz.v2_carts import random_v2_cart
from gpu_engine.reference import reference_brute_force_v2, reference_cost_v2
from gpu_engine.solvers.ga.core import ga_arrays
from gpu_engine.solvers.ga.solve import CpuPopulation, GaConfig, solve_ga

pytestmark = [
    pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaWarning"),
    pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning"),
]


def _assert_same_run(arrays, config, seed, generations, threads=None):
    from gpu_engine.solvers.ga.cuda_v2 import GpuPopulationV2

    cpu = CpuPopulation(arrays, config, seed, threads=1)
    gpu = GpuPopulationV2(arrays, config, seed, threads=threads)
    cpu.initialise()
    gpu.initialise()
    _assert_same(cpu, gpu)
    for _ in range(generations):
        slot = cpu.best()
        assert gpu.best() == slot
        assert cpu.elite(slot[0]) == gpu.elite(slot[0])
        _assert_same(cpu, gpu)
        cpu.generation(cpu.best()[0])
        gpu.generation(gpu.best()[0])
        _assert_same(cpu, gpu)


def _assert_same(cpu, gpu):
    genes, fit = gpu.population()
    assert np.array_equal(genes, cpu.genes_in)
    assert np.array_equal(fit, cpu.fit_in)


def _v2_arrays(seed, n_lines, **kwargs):
    problem = CartProblem.from_dict(random_v2_cart(seed, n_lines, **kwargs))
    assert not problem.simple
    return ga_arrays(problem)


@pytest.mark.cudasim
@pytest.mark.parametrize("seed", [1, 2])
def test_v2_kernels_equal_the_cpu_twin_in_the_simulator(seed):
    arrays = _v2_arrays(seed, 5, n_merchants=3, max_nodes=3)
    config = GaConfig(population=6, child_ls_steps=2, elite_ls_steps=2, p_mutation=1.0)
    _assert_same_run(arrays, config, seed, generations=2)


@pytest.mark.cudasim
def test_gpu_ga_answers_a_v2_cart_in_the_simulator():
    cart = random_v2_cart(4, 4, n_merchants=2, max_nodes=2)
    problem = CartProblem.from_dict(cart)
    assert not problem.simple
    config = GaConfig(population=4, child_ls_steps=2, elite_ls_steps=2, max_generations=1)
    solution = solve_ga(problem, device="gpu", config=config, seed=1)
    picks = {line: (m, solution.nodes[line]) for line, m in solution.assignment.items()}
    assert reference_cost_v2(cart, picks) == solution.total
    assert solution.total >= reference_brute_force_v2(cart)[0]


@pytest.mark.gpu
def test_v2_kernels_equal_the_cpu_twin_on_the_gpu():
    # 128 threads a block, a real population, every mutation kind over several generations.
    arrays = _v2_arrays(21, 60, n_merchants=8, max_nodes=3, offers=(2, 5))
    config = GaConfig(population=512, child_ls_steps=6, elite_ls_steps=6)
    _assert_same_run(arrays, config, seed=9, generations=5)


@pytest.mark.gpu
@pytest.mark.parametrize("seed", range(8))
def test_gpu_ga_finds_the_optimum_of_small_v2_carts(seed):
    cart = random_v2_cart(100 + seed, 6, n_merchants=4, max_nodes=2, offers=(1, 2))
    problem = CartProblem.from_dict(cart)
    best, _ = reference_brute_force_v2(cart)
    solution = solve_ga(problem, device="gpu", budget_ms=300, seed=seed)
    assert solution.device != "cpu"
    assert solution.total == best


@pytest.mark.gpu
def test_warm_steps_compile_the_v2_kernels():
    from gpu_engine.solvers.ga.solve import warm_steps

    warm_steps(CartProblem.from_dict(random_v2_cart(2, 4, max_nodes=3)), gpu=True)
