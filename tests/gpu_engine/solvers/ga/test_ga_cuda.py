"""The GA's CUDA kernels against their CPU twin: the same populations, bit for bit.

In CI the kernels run in the CUDA simulator (tiny carts, tiny populations, 32 threads a block);
the ``gpu``-marked tests repeat the parity at real sizes on the lent GPU and check the GPU GA's
answers against brute force.
"""

import numpy as np
import pytest

from gpu_engine import CartProblem
from gpu_engine.planning.carts import random_cart
from gpu_engine.problem import CapacityError
from gpu_engine.reference import reference_brute_force
from gpu_engine.solvers.ga.core import ga_arrays
from gpu_engine.solvers.ga.solve import CpuPopulation, GaConfig, solve_ga

pytestmark = [
    pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaWarning"),
    pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning"),
]


def _assert_same_run(arrays, config, seed, generations, threads=None):
    from gpu_engine.solvers.ga.cuda import GpuPopulation

    cpu = CpuPopulation(arrays, config, seed)
    gpu = GpuPopulation(arrays, config, seed, threads=threads)
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


@pytest.mark.cudasim
@pytest.mark.parametrize("seed", [1, 2])
def test_kernels_equal_the_cpu_twin_in_the_simulator(seed):
    cart = random_cart(seed, 5, n_merchants=4, offers=(1, 4))
    config = GaConfig(population=6, child_ls_steps=2, elite_ls_steps=2, p_mutation=1.0)
    _assert_same_run(ga_arrays(CartProblem.from_dict(cart)), config, seed, generations=2)


def test_carts_beyond_shared_memory_are_refused():
    from gpu_engine.solvers.ga.cuda import MAX_LINES, check_capacity

    cart = random_cart(1, MAX_LINES + 1, n_merchants=10, offers=(1, 2))
    with pytest.raises(CapacityError):
        check_capacity(ga_arrays(CartProblem.from_dict(cart)))


@pytest.mark.gpu
def test_kernels_equal_the_cpu_twin_on_the_gpu():
    # 128 threads a block, full-size population, every mutation kind over many generations.
    arrays = ga_arrays(CartProblem.from_dict(random_cart(21, 60)))
    config = GaConfig(population=512, child_ls_steps=6, elite_ls_steps=6)
    _assert_same_run(arrays, config, seed=9, generations=5)


@pytest.mark.gpu
@pytest.mark.parametrize("seed", range(6))
def test_gpu_ga_finds_the_optimum_of_small_carts(seed):
    cart = random_cart(100 + seed, 7, n_merchants=6, offers=(1, 4))
    best, _ = reference_brute_force(cart)
    solution = solve_ga(CartProblem.from_dict(cart), device="gpu", budget_ms=200, seed=seed)
    assert solution.total == best
    assert solution.device != "cpu"


@pytest.mark.gpu
def test_gpu_ga_honours_its_budget():
    problem = CartProblem.from_dict(random_cart(33, 100))
    solve_ga(problem, device="gpu", budget_ms=20)  # kernels compiled or loaded
    for budget in (30.0, 100.0):
        config = GaConfig(population=16384, child_ls_steps=8, stall_generations=10_000)
        solution = solve_ga(problem, device="gpu", budget_ms=budget, config=config)
        assert solution.stats["stop"] == "budget"
        assert solution.elapsed_ms <= 1.1 * budget
