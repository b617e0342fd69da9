"""Genetic algorithm for carts past the exact solvers' reach (GPU, with a numba CPU twin).

A chromosome is one offer choice per line (a column per line: a merchant, or on a version 2
cart one node of a merchant, so a move may change the node alone); fitness is the spec's exact
total in cents. Simple carts run :mod:`.cpu`/:mod:`.cuda`, version 2 carts their twins
:mod:`.cpu_v2`/:mod:`.cuda_v2`, which price two parcels and one or two merchants per move.
The population starts seeded (cheapest offer per line, every reachable free-shipping threshold
filled greedily, every merchant's consolidation) and random for the rest.
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
time budget (before a generation predicted to overrun it; on the CPU also inside any step, the
first population, a generation or an elite pass, with what the step found so far: the answer is
always the best individual met), after ``stall_generations`` without improvement, at
``max_generations``, or when the best meets a proven lower bound (then, and only then,
``optimal`` is True). A later deadline runs the earlier one's steps and more, so it never ends
worse. With ``restarts`` a stalled run does not end the search while the budget lasts: a new
population starts from the next seed (:func:`restart_seed`), the same on both devices, and the
best of the runs is the answer (the planner's anytime routes use it to spend what their other
phases leave).

The driver loop is :func:`gpu_engine.solvers.ga.loop.evolve`. On the CPU the steps run on every
core the process may use (:mod:`.workers`), and the population follows the cart and the cores
(:func:`cpu_config`): as many children as a generation of about 0.75 ms a thread allows, 32 to
256 (the GPU's 16384 would leave a CPU a handful of generations), doubled when the run stalls,
up to four times that and 256 (``GaConfig.grow_to``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from gpu_engine.problem import CartProblem
from gpu_engine.results import make_solution
from gpu_engine.solution import Solution
from gpu_engine.solvers.ga import cpu as ga_cpu
from gpu_engine.solvers.ga import cpu_v2 as ga_cpu_v2
from gpu_engine.solvers.ga.core import (
    NO_CANDIDATE,
    GaArrays,
    GaConfig,
    ga_arrays,
    seeded_individuals,
)
from gpu_engine.solvers.ga.loop import GaRun, Population, evolve
from gpu_engine.solvers.ga.rng import rng_states
from gpu_engine.solvers.ga.seeds import drop_seed
from gpu_engine.solvers.ga.workers import cpu_threads, run_chunks

# The CPU's knobs; its population is chosen per cart by :func:`cpu_config`.
CPU_CONFIG = GaConfig(population=128, stall_generations=200)
# Large enough to keep a GPU busy, small enough for some 50 generations in a 100 ms budget
# (a generation of 100 lines takes about 2 ms).
GPU_CONFIG = GaConfig(population=16384, child_ls_steps=8, stall_generations=100)
# A CPU child costs about this many ns per (line, candidate) pair and descent step (crossover,
# mutation and each step scan the pairs); the high end of what was seen, so that loaded
# machines still get their generations.
CPU_CHILD_NS = 10.0
# A generation's target time on each thread: in short budgets more generations, and with them
# more elite passes, beat more children per generation.
CPU_GENERATION_US = 750.0
CPU_POPULATION_MIN = 32
CPU_POPULATION_MAX = 256
# A stalled CPU run doubles its population up to this many times its first size (at most
# ``CPU_POPULATION_MAX``) before a stall stops it (GaConfig.grow_to): the small populations
# that serve short budgets best stall above the optimum in long ones that larger ones reach.
# Small carts start at the maximum and stall early, which leaves the planner's proof (HiGHS)
# the rest of the budget.
CPU_GROWTH = 4
CPU_GROW_AFTER = 40
# What building the Solution costs per line after the search (see ``solve_ga``).
FINISH_US_PER_LINE = 10.0
BP_SCALE = 10_000
# A stalled run restarts only while at least this much of its budget is left (ms).
RESTART_MIN_MS = 10.0
_SEEDS = 2**63


def cpu_config(arrays: GaArrays, threads: int, base: GaConfig = CPU_CONFIG) -> GaConfig:
    """``base`` with the population the CPU breeds in about ``CPU_GENERATION_US`` per
    generation on ``threads`` threads (a power of two in ``CPU_POPULATION_MIN`` ..
    ``CPU_POPULATION_MAX``). A function of the cart's size and the thread count only, never of
    the budget or the clock: a run stays a pure function of the seed and its step count, which
    the planner's monotonicity rests on."""
    pairs = int(arrays.cnt.sum()) + arrays.n_lines
    child_us = CPU_CHILD_NS * pairs * (1 + base.child_ls_steps) / 1e3
    wanted = max(1.0, threads * CPU_GENERATION_US / child_us)
    population = 1 << round(math.log2(wanted))
    population = min(CPU_POPULATION_MAX, max(CPU_POPULATION_MIN, population))
    grow_to = max(population, min(CPU_POPULATION_MAX, CPU_GROWTH * population))
    return base.with_(population=population, grow_to=grow_to, grow_after=CPU_GROW_AFTER)


def lower_bound(problem: CartProblem) -> int:
    """A proven lower bound: every line at its cheapest unit price after the largest discount
    that could apply (shipping >= 0, and a floored discount is at most its exact share)."""
    return arrays_lower_bound(ga_arrays(problem))


def arrays_lower_bound(arrays: GaArrays) -> int:
    """:func:`lower_bound` of a cart already compacted (over each line's candidates only: the
    full price matrix of a large cart is slow to scan)."""
    if arrays.fulfil is not None:
        return _fulfilled_lower_bound(arrays)
    reachable = arrays.params[3] > 0
    units_max = np.zeros(arrays.n_merchants, dtype=np.int64)
    valid = arrays.cand >= 0
    np.add.at(
        units_max, arrays.cand[valid], np.broadcast_to(arrays.qty[:, None], valid.shape)[valid]
    )
    bp = np.where(reachable & (units_max >= arrays.params[3]), arrays.params[4], 0)
    cand = np.where(valid, arrays.cand, 0)
    price = np.take_along_axis(arrays.price, cand, axis=1)
    scaled = arrays.qty[:, None] * price * (BP_SCALE - bp[cand])
    per_line = np.where(valid, scaled, np.iinfo(np.int64).max).min(axis=1)
    total = sum(int(v) for v in per_line)
    return -(-total // BP_SCALE)


def _fulfilled_lower_bound(arrays: GaArrays) -> int:
    """:func:`arrays_lower_bound` of a version 2 cart: a merchant's discount counts the units
    of every node, so whether it can apply is decided per merchant (over the lines any of its
    nodes could take, each line counted once), and every column of it gets its basis points."""
    f = arrays.fulfil
    assert f is not None
    valid = arrays.cand >= 0
    cand = np.where(valid, arrays.cand, 0)
    owner = np.where(valid, f.colp[2][cand], -1)
    n_owners = f.ownp.shape[1]
    units_max = np.zeros(n_owners, dtype=np.int64)
    for o in range(n_owners):
        units_max[o] = int(arrays.qty[(owner == o).any(axis=1)].sum())
    dmin, dbp = f.ownp[1], f.ownp[2]
    owner_bp = np.where((dmin > 0) & (units_max >= dmin), dbp, 0)
    bp = owner_bp[f.colp[2]]
    price = np.take_along_axis(arrays.price, cand, axis=1)
    # Python ints: exact however large the prices.
    total = 0
    for i in range(arrays.n_lines):
        total += min(
            int(arrays.qty[i]) * int(price[i, k]) * (BP_SCALE - int(bp[cand[i, k]]))
            for k in range(int(arrays.cnt[i]))
        )
    return -(-total // BP_SCALE)


class CpuPopulation:
    """The population in host memory, stepped by the numba twin
    (:mod:`gpu_engine.solvers.ga.cpu`) on ``threads`` threads (:mod:`.workers`): every step is
    a range of independent slots or elite moves, so the thread count changes how fast, never
    what."""

    device = "cpu"

    def __init__(
        self, arrays: GaArrays, config: GaConfig, seed: int, *, threads: int | None = None
    ) -> None:
        self.arrays = arrays
        self.config = config
        self.threads = cpu_threads() if threads is None else max(1, threads)
        self.cut: str | None = None
        self.seed = seed
        size, n = config.population, arrays.n_lines
        self.states = rng_states(size, seed)
        self.genes_in = np.empty((size, n), dtype=np.int32)
        self.genes_out = np.empty((size, n), dtype=np.int32)
        self.fit_in = np.empty(size, dtype=np.int64)
        self.fit_out = np.empty(size, dtype=np.int64)
        # A version 2 cart's steps take the problem as one tuple (:mod:`.cpu_v2`).
        self._ops = ga_cpu if arrays.fulfil is None else ga_cpu_v2
        self._problem: tuple = (
            (arrays.qty, arrays.price, arrays.cand, arrays.cnt, arrays.params)
            if arrays.fulfil is None
            else (arrays.v2_problem(),)
        )
        # One elite-pass result row per thread (its best move so far).
        self._keep = np.empty((self.threads, n), dtype=np.int32)

    def _run(
        self, count: int, work, deadline: float | None, step: str, must: int = 0
    ) -> np.ndarray:
        done = run_chunks(
            count, work, deadline=deadline, threads=self.threads, must=must, clock=time.perf_counter
        )
        if not done.all():
            self.cut = step
        return done

    def initialise(self, *, deadline: float | None = None) -> None:
        seeded = seeded_individuals(self.arrays, self.config.population)
        # Rows the deadline leaves unbuilt never win ``best``.
        self.fit_in[:] = NO_CANDIDATE
        steps = self.config.child_ls_steps

        def work(_worker: int, lo: int, hi: int) -> None:
            self._ops.initialise_slots(
                lo, hi, self.genes_in, self.fit_in, seeded, self.states, steps, *self._problem
            )

        # The cheapest-offer and drop-heuristic rows are built whatever the deadline: the
        # answer of a budget too short for anything else.
        self._run(self.config.population, work, deadline, "initialise", must=2)

    def grow(self, size: int, *, deadline: float | None = None) -> None:
        """Grow the population to ``size`` slots: the old ones keep their individuals and
        random states, the new ones take the streams a population of ``size`` would have given
        them and start random (with the first population's descent)."""
        old, n = self.config.population, self.arrays.n_lines
        states = rng_states(size, self.seed)
        states[:old] = self.states
        genes = np.empty((size, n), dtype=np.int32)
        genes[:old] = self.genes_in
        fit = np.full(size, NO_CANDIDATE, dtype=np.int64)
        fit[:old] = self.fit_in
        self.states, self.genes_in, self.fit_in = states, genes, fit
        self.genes_out = np.empty((size, n), dtype=np.int32)
        self.fit_out = np.empty(size, dtype=np.int64)
        self.config = self.config.with_(population=size)
        no_seeds = np.empty((0, n), dtype=np.int32)
        steps = self.config.child_ls_steps

        def work(_worker: int, lo: int, hi: int) -> None:
            self._ops.initialise_slots(
                old + lo, old + hi, genes, fit, no_seeds, states, steps, *self._problem
            )

        self._run(size - old, work, deadline, "grow")

    def best(self) -> tuple[int, int]:
        slot = int(ga_cpu.best_slot(self.fit_in))
        return slot, int(self.fit_in[slot])

    def elite(self, slot: int, *, deadline: float | None = None) -> bool:
        row = self.genes_in[slot].copy()
        steps = self.config.elite_ls_steps
        # Per thread: (total, move) of its best move so far, whose result is in its ``_keep``
        # row. A thread claims moves in increasing order and a chunk only reports a move
        # strictly better than the thread's best, so the lowest (total, move) over the threads
        # is the move a single loop over all of them keeps.
        best = [(int(self.fit_in[slot]), -1)] * self.threads

        def work(worker: int, lo: int, hi: int) -> None:
            keep = self._keep[worker]
            total, move = self._ops.elite_moves(
                lo, hi, row, best[worker][0], steps, keep, *self._problem
            )
            if move >= 0:
                best[worker] = (int(total), int(move))

        self._run(ga_cpu.elite_moves_count(self.arrays.n_merchants), work, deadline, "elite")
        found = [(total, move, w) for w, (total, move) in enumerate(best) if move >= 0]
        if not found:
            return False
        total, _, winner = min(found)
        self.genes_in[slot] = self._keep[winner]
        self.fit_in[slot] = total
        return True

    def generation(self, elite_slot: int, *, deadline: float | None = None) -> None:
        knobs = self.config.knobs()

        def work(_worker: int, lo: int, hi: int) -> None:
            self._ops.generation_slots(
                lo,
                hi,
                self.genes_in,
                self.fit_in,
                self.genes_out,
                self.fit_out,
                elite_slot,
                self.states,
                knobs,
                *self._problem,
            )

        done = self._run(self.config.population, work, deadline, "generation")
        if self.cut:
            # A generation cut short: the children built so far join the population (each is
            # at least as good as its slot's individual), the rest stay as they were.
            self.genes_in[done] = self.genes_out[done]
            self.fit_in[done] = self.fit_out[done]
            return
        self.genes_in, self.genes_out = self.genes_out, self.genes_in
        self.fit_in, self.fit_out = self.fit_out, self.fit_in

    def genes(self, slot: int) -> np.ndarray:
        return self.genes_in[slot].copy()


def restart_seed(seed: int, k: int) -> int:
    """The seed of a run's ``k``-th restart (0: the run itself): fixed by the first seed, so a
    run with restarts is still a pure function of its seed and its steps."""
    return (seed + k) % _SEEDS


def _restarts(
    first: GaRun,
    start: Callable[[int], Population],
    *,
    seed: int,
    config: GaConfig,
    budget_ms: float,
    started: float,
    bound: int,
) -> tuple[GaRun, list[dict[str, Any]]]:
    """After a run that stalled, new populations (seeds :func:`restart_seed`) while at least
    ``RESTART_MIN_MS`` of the budget is left: the best run, with the last run's stop reason and
    time, and one record per restart."""
    best = run = first
    records: list[dict[str, Any]] = []
    while run.stop == "stall" and _left_ms(started, budget_ms) >= RESTART_MIN_MS:
        k = len(records) + 1
        population = start(restart_seed(seed, k))
        run = evolve(
            population,
            config=config,
            budget_ms=budget_ms,
            started=started,
            bound=bound,
            clock=time.perf_counter,
        )
        records.append(
            {
                "seed": restart_seed(seed, k),
                "total": run.total,
                "generations": run.generations,
                "stop": run.stop,
                # Since the budget's start, at this run's end.
                "ms": round(run.elapsed_ms, 3),
            }
        )
        if run.total < best.total:
            best = run
    return replace(best, stop=run.stop, elapsed_ms=run.elapsed_ms, cut=run.cut), records


def _left_ms(started: float, budget_ms: float) -> float:
    return budget_ms - (time.perf_counter() - started) * 1e3


def solve_ga(
    problem: CartProblem,
    *,
    budget_ms: float | None = None,
    seed: int = 0,
    device: str = "auto",
    config: GaConfig | None = None,
    bound: int | None = None,
    threads: int | None = None,
    restarts: bool = False,
) -> Solution:
    """Best assignment the GA finds within ``budget_ms`` (None: until it stalls).

    ``device``: "cpu", "gpu" or "auto" (a real GPU when present). ``config`` defaults to
    :data:`GPU_CONFIG` / :func:`cpu_config`. ``bound``: a proven lower bound from elsewhere (the
    GA also computes :func:`lower_bound`); reaching it proves the answer optimal. ``threads``:
    the CPU's (default :func:`~gpu_engine.solvers.ga.workers.cpu_threads`); with the seed it
    fixes the CPU run. On the CPU every step stops at the deadline with what it found
    (``stats["cut"]`` names the step it cut short). ``restarts`` (with a budget): a run that
    stalls restarts from the next seed until the budget ends (``stats["restarts"]``, one
    record each; ``stats["stop"]`` is the last run's)."""
    started = time.perf_counter()
    use_gpu = _use_gpu(device)
    arrays = ga_arrays(problem)
    threads = cpu_threads() if threads is None else max(1, threads)
    if config is None:
        config = GPU_CONFIG if use_gpu else cpu_config(arrays, threads)
    own = arrays_lower_bound(arrays)
    proven = own if bound is None else max(bound, own)

    def start(run_seed: int) -> Population:
        if use_gpu and arrays.fulfil is not None:
            from gpu_engine.solvers.ga.cuda_v2 import GpuPopulationV2

            return GpuPopulationV2(arrays, config, run_seed)
        if use_gpu:
            from gpu_engine.solvers.ga.cuda import GpuPopulation

            return GpuPopulation(arrays, config, run_seed)
        return CpuPopulation(arrays, config, run_seed, threads=threads)

    population = start(seed)
    # The answer is re-priced and turned into a Solution after the search (in Python, about
    # 10 us a line): the search stops that much before the budget.
    search_ms = None if budget_ms is None else budget_ms - FINISH_US_PER_LINE * arrays.n_lines / 1e3
    run = evolve(
        population,
        config=config,
        budget_ms=search_ms,
        started=started,
        bound=proven,
        clock=time.perf_counter,
    )
    restarted: list[dict[str, Any]] = []
    if restarts and search_ms is not None:
        run, restarted = _restarts(
            run, start, seed=seed, config=config, budget_ms=search_ms, started=started, bound=proven
        )
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
            "population_final": population.config.population,
            "generations": run.generations,
            "stop": run.stop,
            "cut": run.cut,
            "cpu_threads": population.threads if isinstance(population, CpuPopulation) else None,
            "restarts": restarted,
            "init_ms": run.init_ms,
            "lower_bound": proven,
            "history": run.history,
        },
    )


def warm_steps(problem: CartProblem, *, gpu: bool = False) -> None:
    """Compile every step a request can reach on a cart of ``problem``'s kind (version 1 or
    2): the first population, an elite pass and a generation, on the CPU and, with ``gpu``, on
    the GPU, and :func:`~gpu_engine.solvers.ga.seeds.drop_seed`. :func:`solve_ga` on a tiny
    cart can stop at its lower bound before any generation, which would leave those to a
    shopper's first request."""
    arrays = ga_arrays(problem)
    config = GaConfig(population=4, child_ls_steps=1, elite_ls_steps=1, p_mutation=1.0)
    populations: list[Population] = [CpuPopulation(arrays, config, 0, threads=1)]
    if gpu:
        from gpu_engine.solvers.ga.cuda import GpuPopulation
        from gpu_engine.solvers.ga.cuda_v2 import GpuPopulationV2

        kind = GpuPopulation if arrays.fulfil is None else GpuPopulationV2
        populations.append(kind(arrays, config, 0))
    for population in populations:
        population.initialise()
        population.elite(population.best()[0])
        population.generation(population.best()[0])
    drop_seed(problem)


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
