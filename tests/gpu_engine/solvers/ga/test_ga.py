"""The genetic algorithm on the CPU (numba twin): quality floors, determinism, budget, bounds."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_engine import CartProblem, solve
from gpu_engine.planning.carts import random_cart
from gpu_engine.pricing import assignment_cost
from gpu_engine.reference import reference_brute_force, reference_cost
from gpu_engine.solvers.ga.core import ga_arrays, seeded_individuals
from gpu_engine.solvers.ga.rng import init_states, rng_next, rng_states
from gpu_engine.solvers.ga.solve import GaConfig, lower_bound, solve_ga
from tests.gpu_engine.strategies import carts

SMALL = GaConfig(population=16, stall_generations=15)


def _cost(problem, choice):
    return int(
        assignment_cost(
            np.asarray(choice, dtype=np.int64),
            problem.quantity,
            problem.price,
            *problem.merchant_params,
        )
    )


@settings(max_examples=40, deadline=None)
@given(carts(max_items=6, max_merchants=4))
def test_never_worse_than_the_cheapest_offer_per_line(cart):
    problem = CartProblem.from_dict(cart)
    solution = solve_ga(problem, device="cpu", config=SMALL)
    assert solution.total <= _cost(problem, problem.cand_merchant[:, 0])
    assert reference_cost(cart, solution.assignment) == solution.total


@pytest.mark.parametrize("seed", range(12))
def test_finds_the_optimum_of_small_carts(seed):
    cart = random_cart(seed, 6, n_merchants=5, offers=(1, 4))
    best, _ = reference_brute_force(cart)
    solution = solve_ga(CartProblem.from_dict(cart), device="cpu", config=SMALL, seed=seed)
    assert solution.total == best


def test_deterministic_per_seed():
    problem = CartProblem.from_dict(random_cart(7, 25))
    config = GaConfig(population=32, max_generations=6, stall_generations=100)
    runs = [solve_ga(problem, device="cpu", config=config, seed=s) for s in (3, 3, 4)]
    assert runs[0].assignment == runs[1].assignment
    assert runs[0].stats["history"] == runs[1].stats["history"]
    assert runs[0].stats["generations"] == 6
    # Another seed is another run (same quality class, not necessarily the same answer).
    assert runs[2].stats["seed"] == 4


def test_honours_the_budget(monkeypatch):
    """On an injected clock where every generation takes 1/32 s: the GA stops at the budget,
    before a generation predicted to overrun it, whatever the speed of the machine running the
    test (the real-time bound is the device benchmark's: BENCHMARKS.md)."""
    import gpu_engine.solvers.ga.solve as ga_module

    class Clock:
        now = 1000.0

        def perf_counter(self):
            return self.now

    clock = Clock()
    step = ga_module.CpuPopulation.generation

    def timed_generation(population, *args, **kwargs):
        step(population, *args, **kwargs)
        clock.now += 1 / 32

    monkeypatch.setattr(ga_module, "time", clock)
    monkeypatch.setattr(ga_module.CpuPopulation, "generation", timed_generation)
    problem = CartProblem.from_dict(random_cart(11, 60))
    config = GaConfig(population=128, stall_generations=10_000)
    solution = solve_ga(problem, device="cpu", budget_ms=300, config=config)
    assert solution.stats["stop"] == "budget"
    # Generations end at 31.25 ms, ..., 281.25 ms; a tenth would end at 312.5 ms > 300 ms.
    assert solution.stats["generations"] == 9
    assert solution.elapsed_ms == 9 * 1000 / 32 <= 300


def test_optimal_only_when_the_lower_bound_is_met():
    # Every line's cheapest offer ships free and no discount applies: the bound is reached.
    easy = {
        "items": [{"id": "a", "quantity": 1}, {"id": "b", "quantity": 2}],
        "merchants": [
            {"id": "x", "shipping": {"base_fee": 500, "per_extra_unit": 0, "free_over": 0}},
            {"id": "y", "shipping": {"base_fee": 0, "per_extra_unit": 0, "free_over": None}},
        ],
        "offers": [
            {"item": "a", "merchant": "x", "price": 100, "stock": None},
            {"item": "a", "merchant": "y", "price": 150, "stock": None},
            {"item": "b", "merchant": "y", "price": 90, "stock": None},
            {"item": "b", "merchant": "x", "price": 95, "stock": None},
        ],
    }
    solution = solve_ga(CartProblem.from_dict(easy), device="cpu", config=SMALL)
    assert solution.optimal and solution.total == 100 + 180
    assert solution.stats["stop"] == "bound"
    hard = CartProblem.from_dict(random_cart(5, 20))
    solution = solve_ga(hard, device="cpu", config=SMALL)
    assert solution.total > lower_bound(hard)
    assert not solution.optimal and solution.gap > 0


@settings(max_examples=40, deadline=None)
@given(carts(max_items=5, max_merchants=4))
def test_lower_bound_is_a_bound(cart):
    best, _ = reference_brute_force(cart)
    assert lower_bound(CartProblem.from_dict(cart)) <= best


# Under the CUDA simulator numba.cuda.random compiles its host functions in object mode.
@pytest.mark.cudasim
@pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaWarning")
def test_rng_matches_numba_cuda_random():
    from numba.cuda.random import (
        init_xoroshiro128p_states_cpu,
        xoroshiro128p_dtype,
        xoroshiro128p_next,
    )

    theirs = np.empty(5, dtype=xoroshiro128p_dtype)
    with np.errstate(over="ignore"):
        init_xoroshiro128p_states_cpu(theirs, np.uint64(42), np.uint64(0))
    ours = np.empty((5, 2), dtype=np.uint64)
    init_states(ours, np.uint64(42))
    assert np.array_equal(theirs.view(np.uint64).reshape(5, 2), ours)
    for _ in range(3):
        for k in range(5):
            with np.errstate(over="ignore"):
                expected = xoroshiro128p_next(theirs, k)
            assert rng_next(ours, k) == expected


def test_rng_states_are_cached_but_handed_out_as_copies():
    a = rng_states(8, 1)
    a[:] = 0
    assert rng_states(8, 1).any()


def test_seeded_individuals():
    problem = CartProblem.from_dict(random_cart(3, 12, n_merchants=10, offers=(2, 6)))
    arrays = ga_arrays(problem)
    seeded = seeded_individuals(arrays, 64)
    assert np.array_equal(seeded[0], arrays.cand[:, 0])
    assert 1 < seeded.shape[0] <= 32
    for row in seeded:  # every gene is one of its line's eligible merchants
        assert all(arrays.price[i, m] >= 0 for i, m in enumerate(row))


def test_registered_solvers_take_the_seed():
    problem = CartProblem.from_dict(random_cart(9, 8, n_merchants=6, offers=(1, 4)))
    solution = solve(problem, algorithm="cpu-ga", budget_ms=50, seed=5)
    assert solution.algorithm == "ga" and solution.device == "cpu"
    assert solution.stats["seed"] == 5


def test_config_validation():
    with pytest.raises(ValueError):
        GaConfig(population=1)
    with pytest.raises(ValueError):
        GaConfig(tournament=9)
    with pytest.raises(ValueError):
        GaConfig(p_mutation=1.5)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(cart=carts(max_items=8, max_merchants=5), pick=st.integers(0, 2**32))
def test_the_grow_move_takes_the_prefix_whose_real_change_is_lowest(cart, pick):
    from gpu_engine.solvers.ga import cpu as ga_cpu

    arrays = ga_arrays(CartProblem.from_dict(cart))
    rng = np.random.default_rng(pick)
    child = np.array([arrays.cand[i, rng.integers(arrays.cnt[i])] for i in range(arrays.n_lines)])
    child = child.astype(np.int32)
    n, mc = arrays.n_lines, arrays.n_merchants
    state = [np.zeros(mc, dtype=np.int64) for _ in range(3)]
    scratch = [np.zeros(n, dtype=np.int64) for _ in range(3)]
    problem = (arrays.qty, arrays.price, arrays.params)
    for m in range(mc):
        grown = child.copy()
        ga_cpu.aggregate(grown, *problem, *state)  # the move starts from the child's state
        after = ga_cpu.grow_merchant(m, grown, *problem, *state, *scratch)
        assert after == ga_cpu.aggregate(grown, *problem, *state)
        # Every prefix of the same growth order, priced from scratch: none is cheaper.
        ga_cpu.aggregate(child, *problem, *state)
        removal, keys, _ = scratch
        ga_cpu.removals(0, 1, child, *problem, *state, removal)
        count = ga_cpu.grow_keys(0, 1, m, child, removal, *problem[:2], keys)
        order = np.argsort(keys, kind="mergesort")[:count]
        for length in range(1, count + 1):
            trial = child.copy()
            trial[order[:length]] = m
            assert ga_cpu.aggregate(trial, *problem, *state) >= after
