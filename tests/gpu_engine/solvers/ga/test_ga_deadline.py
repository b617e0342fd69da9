"""The CPU GA on the cores and against the clock: every step stops at the deadline
with what it found, at any cart size; the thread count changes the speed, never the run; a later
deadline never ends worse."""

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_engine import CartProblem
from gpu_engine.planning.carts import random_cart
from gpu_engine.pricing import assignment_cost
from gpu_engine.solvers.ga import workers
from gpu_engine.solvers.ga.core import drop_greedy, ga_arrays
from gpu_engine.solvers.ga.solve import (
    CPU_POPULATION_MAX,
    CPU_POPULATION_MIN,
    CpuPopulation,
    GaConfig,
    cpu_config,
    solve_ga,
)


class StepClock:
    """A clock that moves ``step`` seconds at every reading: the run's progress is a pure
    function of the number of readings, whatever the machine's speed."""

    def __init__(self, step: float) -> None:
        self.now = 1000.0
        self.step = step

    def perf_counter(self) -> float:
        self.now += self.step
        return self.now


def _cost(problem, choice) -> int:
    return int(
        assignment_cost(
            np.asarray(choice, dtype=np.int64),
            problem.quantity,
            problem.price,
            *problem.merchant_params,
        )
    )


def test_run_chunks_stops_at_the_deadline_and_keeps_the_first_items():
    clock = StepClock(1.0)
    calls = []

    def work(worker, lo, hi):
        calls.append((lo, hi))

    done = workers.run_chunks(
        50, work, deadline=clock.now + 6.5, threads=1, must=2, clock=clock.perf_counter
    )
    assert done[:2].all() and not done.all()
    assert calls[0] == (0, 2)
    # What ran is a prefix, each item once.
    covered = [i for lo, hi in calls for i in range(lo, hi)]
    assert covered == list(range(len(covered))) == list(np.flatnonzero(done))
    # A deadline already past: nothing beyond the required items.
    done = workers.run_chunks(9, work, deadline=0.0, threads=2, clock=clock.perf_counter)
    assert not done.any()
    done = workers.run_chunks(9, work, deadline=0.0, threads=2, must=1, clock=clock.perf_counter)
    assert list(np.flatnonzero(done)) == [0]


def test_run_chunks_spreads_the_work_and_surfaces_failures(monkeypatch):
    monkeypatch.setattr(workers, "INLINE_S", 0.0)
    monkeypatch.setattr(workers, "CHUNK_S", 1e-6)
    seen = np.zeros(400, dtype=np.int64)
    who = set()

    def work(worker, lo, hi):
        time.sleep(0.0005)
        seen[lo:hi] += 1
        who.add(worker)

    assert workers.run_chunks(400, work, deadline=None, threads=3).all()
    assert (seen == 1).all() and who <= {0, 1, 2}

    def broken(worker, lo, hi):
        if lo >= 5:
            raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        workers.run_chunks(40, broken, deadline=None, threads=2)


def test_the_same_run_on_any_thread_count(monkeypatch):
    # Chunks of a few slots and every thread busy: the split is as fine as it gets.
    monkeypatch.setattr(workers, "INLINE_S", 0.0)
    monkeypatch.setattr(workers, "CHUNK_S", 1e-5)
    problem = CartProblem.from_dict(random_cart(17, 40, n_merchants=30, offers=(2, 8)))
    config = GaConfig(
        population=24, max_generations=12, stall_generations=1000, grow_to=96, grow_after=2
    )
    runs = [solve_ga(problem, device="cpu", config=config, seed=2, threads=t) for t in (1, 2, 3)]
    for run in runs[1:]:
        assert run.assignment == runs[0].assignment
        assert run.stats["history"] == runs[0].stats["history"]
    assert [r.stats["cpu_threads"] for r in runs] == [1, 2, 3]
    assert runs[0].stats["population_final"] in (48, 96)


def test_a_stalled_run_grows_its_population_before_it_stops():
    problem = CartProblem.from_dict(random_cart(8, 30, n_merchants=20, offers=(2, 6)))
    config = GaConfig(population=8, grow_to=32, grow_after=3, stall_generations=6)
    run = solve_ga(problem, device="cpu", config=config, seed=1)
    assert run.stats["stop"] == "stall"
    assert (run.stats["population"], run.stats["population_final"]) == (8, 32)
    fixed = solve_ga(problem, device="cpu", config=config.with_(grow_to=None), seed=1)
    assert fixed.stats["population_final"] == 8
    # The grown run went through the fixed run's generations and more.
    assert run.stats["generations"] > fixed.stats["generations"]
    assert run.total <= fixed.total


def test_the_cpu_population_follows_the_cart_and_the_cores():
    small = ga_arrays(CartProblem.from_dict(random_cart(1, 30, offers=(3, 8))))
    large = ga_arrays(CartProblem.from_dict(random_cart(1, 300, offers=(3, 8))))
    sizes = {
        (name, t): cpu_config(a, t).population
        for name, a in (("small", small), ("large", large))
        for t in (1, 2, 8)
    }
    for size in sizes.values():
        assert CPU_POPULATION_MIN <= size <= CPU_POPULATION_MAX and size & (size - 1) == 0
    assert sizes["small", 1] > sizes["large", 1]
    assert sizes["small", 1] <= sizes["small", 2] <= sizes["small", 8]
    assert sizes["small", 8] > sizes["small", 1]


def test_a_cut_step_keeps_what_it_found():
    problem = CartProblem.from_dict(random_cart(5, 30, n_merchants=20, offers=(2, 6)))
    arrays = ga_arrays(problem)
    population = CpuPopulation(arrays, GaConfig(population=32), seed=1, threads=2)
    # A deadline already past: the cheapest-offer and drop rows only.
    population.initialise(deadline=0.0)
    assert population.cut == "initialise"
    slot, total = population.best()
    assert slot in (0, 1)
    drop = np.empty(arrays.n_lines, dtype=np.int32)
    drop_greedy(drop, arrays.qty, arrays.price, arrays.cand, arrays.params)
    assert total <= _cost(problem, arrays.to_original(drop))
    assert total == _cost(problem, arrays.to_original(population.genes(slot)))
    # A generation cut at once changes nothing, and the best stays.
    population = CpuPopulation(arrays, GaConfig(population=32), seed=1, threads=2)
    population.initialise()
    before = population.fit_in.copy()
    population.generation(population.best()[0], deadline=0.0)
    assert population.cut == "generation"
    assert np.array_equal(population.fit_in, before)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaDeprecationWarning")
def test_a_large_cart_stops_at_the_deadline(monkeypatch):
    """10,000 lines, 3 offers a line: one individual's descent takes ~15 ms, a full first
    population and elite pass several seconds. On a clock that moves a tenth of the budget at
    every reading (a chunk of work reads it), the GA stops inside its first steps within two
    readings of its deadline, says so, and answers at least the drop heuristic's assignment."""
    import gpu_engine.solvers.ga.solve as ga_module

    problem = CartProblem.from_dict(random_cart(1, 10_000, offers=(3, 3)))
    arrays = ga_arrays(problem)
    solve_ga(CartProblem.from_dict(random_cart(2, 30, offers=(3, 3))), device="cpu", budget_ms=20)
    budget = 300.0
    step_ms = budget / 10
    monkeypatch.setattr(ga_module, "time", StepClock(step_ms / 1e3))
    solution = solve_ga(problem, device="cpu", budget_ms=budget, seed=0)
    assert solution.stats["stop"] == "budget"
    assert solution.stats["cut"] in ("initialise", "elite", "generation", "grow")
    assert solution.elapsed_ms <= budget + 2 * step_ms
    drop = np.empty(arrays.n_lines, dtype=np.int32)
    drop_greedy(drop, arrays.qty, arrays.price, arrays.cand, arrays.params)
    assert solution.total <= _cost(problem, arrays.to_original(drop))


@pytest.mark.slow
@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 50),
    budgets=st.tuples(st.integers(1, 1500), st.integers(1, 1500)),
)
def test_a_later_deadline_never_ends_worse(seed, budgets):
    """On a clock that moves at every reading, and with every generation started whatever its
    prediction, the deadlines fall inside every step (first population, elite pass,
    generation): the run with more readings ends no worse."""
    import gpu_engine.solvers.ga.loop as loop_module
    import gpu_engine.solvers.ga.solve as ga_module

    problem = CartProblem.from_dict(random_cart(seed, 24, n_merchants=12, offers=(2, 6)))
    totals, cuts = [], set()
    for budget in sorted(budgets):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(ga_module, "time", StepClock(1e-5))
            patch.setattr(loop_module, "_next_generation_s", lambda durations: 0.0)
            run = solve_ga(problem, device="cpu", budget_ms=budget / 100, seed=seed, threads=1)
        totals.append(run.total)
        cuts.add(run.stats["cut"])
    assert totals[1] <= totals[0]
    assert cuts <= {None, "initialise", "elite", "generation", "grow"}
