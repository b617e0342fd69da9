"""Genetic algorithm for carts past the exact solvers' reach (GPU, with a numba CPU twin).

A chromosome is one offer choice per line (a merchant per line); fitness is the spec's exact
total in cents. The population starts seeded (cheapest offer per line, every reachable
free-shipping threshold filled greedily, every merchant's consolidation) and random for the rest.
Each generation every slot breeds a child: two tournaments pick the parents, crossover copies
whole merchant groups of the second parent into the first, a mutation guided by the elite (move
a line to a merchant already in use, empty a merchant, copy the best individual's group, grow a
merchant towards its threshold or discount, or a random line) and a few best single-line moves
follow, and the child replaces the slot's individual unless it is worse (so the best is never
lost: elitism). The best individual then gets an *elite pass*: every grow/close move plus a
descent, tried in parallel on copies, the best kept.

Deterministic per seed: every slot owns an xoroshiro128+ state (``numba.cuda.random``, created
once per process for each population size and seed, reused) and draws a fixed count of numbers
per generation; the CPU and GPU implementations compute the same populations. A run stops at the
time budget (between generations, predicted from the generations so far), after
``stall_generations`` without improvement, at ``max_generations``, or when the best meets a
proven lower bound (then, and only then, ``optimal`` is True).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from gpu_engine.problem import CartProblem
from gpu_engine.results import make_solution
from gpu_engine.solution import Solution
from gpu_engine.solvers.ga import cpu as ga_cpu
from gpu_engine.solvers.ga.core import GaArrays, GaConfig, ga_arrays, rng_states, seeded_individuals

# A CPU core breeds about a hundred children a few hundred times in 500 ms: the budget, not
# stalling, should end its runs.
CPU_CONFIG = GaConfig(population=128, stall_generations=200)
# On the lent H200 a generation of 16384 children (100 lines) takes about 2 ms: some 50
# generations in a 100 ms budget, the best of the population sizes measured (BENCHMARKS.md).
GPU_CONFIG = GaConfig(population=16384, child_ls_steps=8, stall_generations=100)
BP_SCALE = 10_000
# Generations whose durations predict the next one (the longest of them is assumed).
_TIMING_WINDOW = 4


def lower_bound(problem: CartProblem) -> int:
    """A proven lower bound: every line at its cheapest unit price after the largest discount
    that could apply (shipping >= 0, and a floored discount is at most its exact share)."""
    arrays = ga_arrays(problem)
    reachable = arrays.params[3] > 0
    units_max = (arrays.price >= 0).astype(np.int64).T @ arrays.qty
    bp = np.where(reachable & (units_max >= arrays.params[3]), arrays.params[4], 0)
    scaled = np.where(
        arrays.price >= 0, arrays.qty[:, None] * arrays.price * (BP_SCALE - bp[None, :]), -1
    )
    per_line = np.where(scaled >= 0, scaled, np.iinfo(np.int64).max).min(axis=1)
    total = sum(int(v) for v in per_line)
    return -(-total // BP_SCALE)


class Population(Protocol):
    """One device's population: the steps the driver loop calls."""

    device: str

    def initialise(self) -> None: ...
    def best(self) -> tuple[int, int]: ...
    def elite(self, slot: int) -> bool: ...
    def generation(self, elite_slot: int) -> None: ...
    def genes(self, slot: int) -> np.ndarray: ...


class CpuPopulation:
    """The population in host memory, stepped by the numba twin
    (:mod:`gpu_engine.solvers.ga.cpu`)."""

    device = "cpu"

    def __init__(self, arrays: GaArrays, config: GaConfig, seed: int) -> None:
        self.arrays = arrays
        self.config = config
        size, n = config.population, arrays.n_lines
        self.states = rng_states(size, seed)
        self.genes_in = np.empty((size, n), dtype=np.int32)
        self.genes_out = np.empty((size, n), dtype=np.int32)
        self.fit_in = np.empty(size, dtype=np.int64)
        self.fit_out = np.empty(size, dtype=np.int64)
        self._problem = (arrays.qty, arrays.price, arrays.cand, arrays.cnt, arrays.params)

    def initialise(self) -> None:
        seeded = seeded_individuals(self.arrays, self.config.population)
        ga_cpu.initialise(
            self.genes_in,
            self.fit_in,
            seeded,
            self.states,
            self.config.child_ls_steps,
            *self._problem,
        )

    def best(self) -> tuple[int, int]:
        slot = int(ga_cpu.best_slot(self.fit_in))
        return slot, int(self.fit_in[slot])

    def elite(self, slot: int) -> bool:
        move = ga_cpu.elite_pass(
            self.genes_in, self.fit_in, slot, self.config.elite_ls_steps, *self._problem
        )
        return move >= 0

    def generation(self, elite_slot: int) -> None:
        ga_cpu.generation(
            self.genes_in,
            self.fit_in,
            self.genes_out,
            self.fit_out,
            elite_slot,
            self.states,
            self.config.knobs(),
            *self._problem,
        )
        self.genes_in, self.genes_out = self.genes_out, self.genes_in
        self.fit_in, self.fit_out = self.fit_out, self.fit_in

    def genes(self, slot: int) -> np.ndarray:
        return self.genes_in[slot].copy()


@dataclass
class GaRun:
    """What a GA run found and how it went."""

    genes: np.ndarray  # compact merchant per line
    total: int
    generations: int
    stop: str  # "budget", "stall", "max_generations" or "bound"
    init_ms: float
    elapsed_ms: float
    history: list[tuple[int, int]] = field(default_factory=list)  # (generation, best total)


def evolve(
    population: Population,
    *,
    config: GaConfig,
    budget_ms: float | None,
    started: float,
    bound: int | None = None,
) -> GaRun:
    """The driver loop, the same for both devices (see the module docstring for the order).
    ``started`` is the ``time.perf_counter()`` the budget counts from."""
    deadline = None if budget_ms is None else started + budget_ms / 1e3
    population.initialise()
    slot, _ = population.best()
    dirty = population.elite(slot)
    slot, best = population.best()
    init_ms = (time.perf_counter() - started) * 1e3
    history = [(0, best)]
    generation = last_gain = 0
    durations: list[float] = []
    while True:
        stop = _stop_reason(config, generation, last_gain, best, bound)
        if stop is None and deadline is not None:
            expected = max(durations[-_TIMING_WINDOW:], default=0.0)
            if time.perf_counter() + expected > deadline:
                stop = "budget"
        if stop is not None:
            break
        t0 = time.perf_counter()
        population.generation(slot)
        generation += 1
        slot, fit = population.best()
        if dirty or fit < best:
            dirty = population.elite(slot)
            slot, fit = population.best()
        if fit < best:
            best, last_gain = fit, generation
            history.append((generation, best))
        durations.append(time.perf_counter() - t0)
    return GaRun(
        genes=population.genes(slot),
        total=best,
        generations=generation,
        stop=stop,
        init_ms=init_ms,
        elapsed_ms=(time.perf_counter() - started) * 1e3,
        history=history,
    )


def _stop_reason(
    config: GaConfig, generation: int, last_gain: int, best: int, bound: int | None
) -> str | None:
    if bound is not None and best <= bound:
        return "bound"
    if config.max_generations is not None and generation >= config.max_generations:
        return "max_generations"
    if generation - last_gain >= config.stall_generations:
        return "stall"
    return None


def solve_ga(
    problem: CartProblem,
    *,
    budget_ms: float | None = None,
    seed: int = 0,
    device: str = "auto",
    config: GaConfig | None = None,
    bound: int | None = None,
) -> Solution:
    """Best assignment the GA finds within ``budget_ms`` (None: until it stalls).

    ``device``: "cpu", "gpu" or "auto" (a real GPU when present). ``config`` defaults to
    :data:`CPU_CONFIG` / :data:`GPU_CONFIG`. ``bound``: a proven lower bound from elsewhere (the
    GA also computes :func:`lower_bound`); reaching it proves the answer optimal."""
    started = time.perf_counter()
    use_gpu = _use_gpu(device)
    config = config or (GPU_CONFIG if use_gpu else CPU_CONFIG)
    arrays = ga_arrays(problem)
    proven = lower_bound(problem) if bound is None else max(bound, lower_bound(problem))
    if use_gpu:
        from gpu_engine.solvers.ga.cuda import GpuPopulation

        population: Population = GpuPopulation(arrays, config, seed)
    else:
        population = CpuPopulation(arrays, config, seed)
    run = evolve(population, config=config, budget_ms=budget_ms, started=started, bound=proven)
    optimal = run.total <= proven
    return make_solution(
        problem,
        arrays.to_original(run.genes),
        total=run.total,
        optimal=optimal,
        algorithm="ga",
        device=population.device,
        elapsed_ms=(time.perf_counter() - started) * 1e3,
        gap=None if optimal or run.total == 0 else max(0.0, (run.total - proven) / run.total),
        stats={
            "seed": seed,
            "population": config.population,
            "generations": run.generations,
            "stop": run.stop,
            "init_ms": run.init_ms,
            "lower_bound": proven,
            "history": run.history,
        },
    )


def _use_gpu(device: str) -> bool:
    from gpu_engine.device import cuda_target_available, resolve_device

    use = resolve_device(device) == "cuda"
    if use and device != "auto" and not cuda_target_available():
        raise RuntimeError(f"device={device!r} but no CUDA GPU (or simulator) is available")
    return use


def solve_ga_cpu(problem: CartProblem, *, budget_ms: float | None = None, seed: int = 0):
    return solve_ga(problem, budget_ms=budget_ms, seed=seed, device="cpu")


def solve_ga_gpu(problem: CartProblem, *, budget_ms: float | None = None, seed: int = 0):
    return solve_ga(problem, budget_ms=budget_ms, seed=seed, device="gpu")
