"""The genetic algorithm's CUDA kernels (numba-cuda) and the GPU population; CPU twin:
:mod:`gpu_engine.solvers.ga.cpu`.

Thread-to-data mapping. ``_init_kernel`` and ``_evolve_kernel``: block ``s`` builds the
individual (the child) of population slot ``s``; ``_elite_kernel``: block ``j`` tries elite move
``j`` on a copy of the best individual. Inside a block, thread ``t`` of ``T`` owns lines ``t, t +
T, ...``, merchants ``t, t + T, ...`` and (line, slot) pairs ``t, t + T, ...`` (the strided
ranges of :mod:`gpu_engine.solvers.ga.ops`); the child and its per-merchant state live in shared
memory; per-merchant sums are shared-memory atomics (integers: order-free, hence deterministic);
best moves and totals are block reductions in shared memory (a tree, which the simulator runs too).
Thread 0 draws the child's random numbers (its slot's xoroshiro128+ state from
``numba.cuda.random``) and makes the few sequential steps (tournaments, single-line moves).
``_argmin_kernel`` and ``_pick_kernel`` are one block: thread ``t`` scans slots (or elite moves)
``t, t + T, ...``, then a tree reduction keeps the lowest (value, index). The block-level steps
the kernels share (descent, mutations, aggregation) are in :mod:`gpu_engine.solvers.ga.cuda_blocks`.

Capacity: carts up to ``MAX_LINES`` lines and ``MAX_MERCHANTS`` merchants able to serve a line
(shared-memory arrays have compile-time sizes); larger carts are refused with a CapacityError
and the planner gives them to the CPU twin.
"""

from __future__ import annotations

import threading

import numpy as np
from numba import cuda, int32, int64, uint64
from numba.cuda.random import xoroshiro128p_dtype, xoroshiro128p_next

from gpu_engine.device import gpu_name, simulator_enabled
from gpu_engine.problem import CapacityError
from gpu_engine.solvers.ga import ops as ga_ops
from gpu_engine.solvers.ga.core import (
    D_CROSS,
    D_MASK,
    D_MUT,
    D_TOUR_A,
    D_TOUR_B,
    N_DRAWS,
    NO_CANDIDATE,
    GaArrays,
    GaConfig,
    seeded_individuals,
)
from gpu_engine.solvers.ga.cuda_blocks import (
    aggregate,
    block_best,
    close,
    copy_row,
    descend,
    grow,
    mutate,
)
from gpu_engine.solvers.ga.rng import rand_below, rand_chance, rng_states

MAX_LINES = 256
MAX_MERCHANTS = 512
MAX_THREADS = 128
# The simulator runs one Python thread per CUDA thread: keep its blocks small.
SIM_THREADS = 32

_crossover_lines = cuda.jit(device=True)(ga_ops.crossover_lines)
_argmin_range = cuda.jit(device=True)(ga_ops.argmin_range)
_tournament = cuda.jit(device=True)(ga_ops.tournament)


# --- kernels -----------------------------------------------------------------------------------


@cuda.jit(cache=True)
def _init_kernel(genes, fit, seeded, n_seeded, states, ls_steps, qty, price, cand, cnt, params):
    """Block s: slot s gets seeded row s (s < n_seeded) or a random eligible merchant per
    line (thread 0, one draw per line), then descent and its fitness."""
    slot = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    n = qty.size
    n_merchants = params.shape[1]
    child = cuda.shared.array(MAX_LINES, int32)[:n]
    sub = cuda.shared.array(MAX_MERCHANTS, int64)[:n_merchants]
    units = cuda.shared.array(MAX_MERCHANTS, int64)[:n_merchants]
    mcost = cuda.shared.array(MAX_MERCHANTS, int64)[:n_merchants]
    removal = cuda.shared.array(MAX_LINES, int64)[:n]
    red_v = cuda.shared.array(MAX_THREADS, int64)
    red_i = cuda.shared.array(MAX_THREADS, int64)
    if slot < n_seeded:
        copy_row(seeded[slot], child)
    elif tid == 0:
        for i in range(n):
            child[i] = cand[i, rand_below(xoroshiro128p_next(states, slot), cnt[i])]
    cuda.syncthreads()
    total = aggregate(child, qty, price, params, sub, units, mcost, red_v)
    total = descend(
        ls_steps,
        total,
        child,
        qty,
        price,
        cand,
        cnt,
        params,
        sub,
        units,
        mcost,
        removal,
        red_v,
        red_i,
    )
    copy_row(child, genes[slot])
    if tid == 0:
        fit[slot] = total


@cuda.jit(cache=True)
def _evolve_kernel(
    genes_in,
    fit_in,
    genes_out,
    fit_out,
    elite_slot,
    states,
    tour,
    p_cross,
    p_mut,
    ls_steps,
    qty,
    price,
    cand,
    cnt,
    params,
):
    """Block s: the child of slot s (ga_cpu.make_child); it replaces the slot's individual in
    the output population unless it is worse."""
    slot = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    n = qty.size
    n_merchants = params.shape[1]
    child = cuda.shared.array(MAX_LINES, int32)[:n]
    sub = cuda.shared.array(MAX_MERCHANTS, int64)[:n_merchants]
    units = cuda.shared.array(MAX_MERCHANTS, int64)[:n_merchants]
    mcost = cuda.shared.array(MAX_MERCHANTS, int64)[:n_merchants]
    removal = cuda.shared.array(MAX_LINES, int64)[:n]
    keys = cuda.shared.array(MAX_LINES, int64)[:n]
    order = cuda.shared.array(MAX_LINES, int64)[:n]
    red_v = cuda.shared.array(MAX_THREADS, int64)
    red_i = cuda.shared.array(MAX_THREADS, int64)
    draws = cuda.shared.array(N_DRAWS, uint64)
    parents = cuda.shared.array(2, int64)
    shared_total = cuda.shared.array(1, int64)
    if tid == 0:
        for k in range(N_DRAWS):
            draws[k] = xoroshiro128p_next(states, slot)
        parents[0] = _tournament(draws, D_TOUR_A, tour, fit_in)
        parents[1] = _tournament(draws, D_TOUR_B, tour, fit_in)
    cuda.syncthreads()
    cross = rand_chance(draws[D_CROSS], p_cross)
    _crossover_lines(
        tid, cuda.blockDim.x, genes_in, parents[0], parents[1], cross, draws[D_MASK], child
    )
    cuda.syncthreads()
    total = aggregate(child, qty, price, params, sub, units, mcost, red_v)
    if rand_chance(draws[D_MUT], p_mut):
        total = mutate(
            draws,
            total,
            child,
            genes_in[elite_slot],
            qty,
            price,
            cand,
            cnt,
            params,
            sub,
            units,
            mcost,
            removal,
            keys,
            order,
            red_v,
            red_i,
            shared_total,
        )
    total = descend(
        ls_steps,
        total,
        child,
        qty,
        price,
        cand,
        cnt,
        params,
        sub,
        units,
        mcost,
        removal,
        red_v,
        red_i,
    )
    if total <= fit_in[slot]:
        copy_row(child, genes_out[slot])
        if tid == 0:
            fit_out[slot] = total
    else:
        copy_row(genes_in[slot], genes_out[slot])
        if tid == 0:
            fit_out[slot] = fit_in[slot]


@cuda.jit(cache=True)
def _argmin_kernel(fit, status):
    """One block: status[0], status[1] = slot and value of the lowest fitness."""
    value, slot = _argmin_range(cuda.threadIdx.x, cuda.blockDim.x, fit)
    red_v = cuda.shared.array(MAX_THREADS, int64)
    red_i = cuda.shared.array(MAX_THREADS, int64)
    value, slot = block_best(value, slot, red_v, red_i)
    if cuda.threadIdx.x == 0:
        status[0] = slot
        status[1] = value


@cuda.jit(cache=True)
def _elite_kernel(genes, status, steps, cand_genes, cand_fit, qty, price, cand, cnt, params):
    """Block j: elite move j (ga_cpu.elite_candidate) on a copy of the individual in slot
    status[0]; writes the result to cand_genes[j] / cand_fit[j]."""
    j = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    n = qty.size
    n_merchants = params.shape[1]
    child = cuda.shared.array(MAX_LINES, int32)[:n]
    sub = cuda.shared.array(MAX_MERCHANTS, int64)[:n_merchants]
    units = cuda.shared.array(MAX_MERCHANTS, int64)[:n_merchants]
    mcost = cuda.shared.array(MAX_MERCHANTS, int64)[:n_merchants]
    removal = cuda.shared.array(MAX_LINES, int64)[:n]
    keys = cuda.shared.array(MAX_LINES, int64)[:n]
    order = cuda.shared.array(MAX_LINES, int64)[:n]
    red_v = cuda.shared.array(MAX_THREADS, int64)
    red_i = cuda.shared.array(MAX_THREADS, int64)
    copy_row(genes[status[0]], child)
    cuda.syncthreads()
    total = aggregate(child, qty, price, params, sub, units, mcost, red_v)
    if 1 <= j <= n_merchants:
        total = grow(
            j - 1, child, qty, price, params, sub, units, mcost, removal, keys, order, red_v, red_i
        )
    elif j > n_merchants:
        u = j - 1 - n_merchants
        if units[u] == 0:
            if tid == 0:
                cand_fit[j] = NO_CANDIDATE
            return
        total = close(u, child, qty, price, cand, cnt, params, sub, units, mcost, red_v)
    total = descend(
        steps, total, child, qty, price, cand, cnt, params, sub, units, mcost, removal, red_v, red_i
    )
    copy_row(child, cand_genes[j])
    if tid == 0:
        cand_fit[j] = total


@cuda.jit(cache=True)
def _pick_kernel(genes, fit, status, cand_genes, cand_fit):
    """One block (ga_cpu.elite_pass's choice): the best elite move replaces the individual in
    slot status[0] when strictly better; status[1] = its fitness, status[2] = the move or -1."""
    red_v = cuda.shared.array(MAX_THREADS, int64)
    red_i = cuda.shared.array(MAX_THREADS, int64)
    value, j = _argmin_range(cuda.threadIdx.x, cuda.blockDim.x, cand_fit)
    value, j = block_best(value, j, red_v, red_i)
    slot = status[0]
    improved = j >= 0 and value < fit[slot]
    cuda.syncthreads()
    if improved:
        copy_row(cand_genes[j], genes[slot])
    if cuda.threadIdx.x == 0:
        if improved:
            fit[slot] = value
        status[1] = fit[slot]
        status[2] = j if improved else -1


# --- host side ---------------------------------------------------------------------------------


def check_capacity(arrays: GaArrays) -> None:
    """Refuse carts the kernels' shared-memory arrays cannot hold."""
    if arrays.n_lines > MAX_LINES:
        raise CapacityError("items", arrays.n_lines, f"the GPU GA takes at most {MAX_LINES} lines")
    if arrays.n_merchants > MAX_MERCHANTS:
        raise CapacityError(
            "merchants",
            arrays.n_merchants,
            f"the GPU GA takes at most {MAX_MERCHANTS} merchants that can serve a line",
        )


_states_lock = threading.Lock()
_device_states: dict[int, object] = {}


def _states_buffer(population: int):
    """The device array of RNG states for a population size: allocated once per process and
    size, reinitialised (copied from the host-side seed cache) for every run."""
    with _states_lock:
        if population not in _device_states:
            _device_states[population] = cuda.device_array(population, dtype=xoroshiro128p_dtype)
        return _device_states[population]


class GpuPopulation:
    """The population in device memory, stepped by the kernels above (same protocol as
    :class:`gpu_engine.solvers.ga.solve.CpuPopulation`). A kernel launch runs to its end (a
    few ms): the steps take a deadline for the protocol's sake and are never ``cut``."""

    cut: str | None = None

    def __init__(
        self, arrays: GaArrays, config: GaConfig, seed: int, *, threads: int | None = None
    ):
        check_capacity(arrays)
        self.device = gpu_name()
        self.arrays = arrays
        self.config = config
        self.threads = threads or (SIM_THREADS if simulator_enabled() else MAX_THREADS)
        if self.threads > MAX_THREADS or self.threads & (self.threads - 1):
            raise ValueError(f"threads must be a power of two <= {MAX_THREADS}")
        size, n = config.population, arrays.n_lines
        self.states = _states_buffer(size)
        self.states.copy_to_device(rng_states(size, seed).view(xoroshiro128p_dtype).reshape(size))
        self.problem = tuple(cuda.to_device(a) for a in self._problem_arrays(arrays))
        self._init, self._evolve, self._elite = self._kernels()
        self.genes_in = cuda.device_array((size, n), dtype=np.int32)
        self.genes_out = cuda.device_array((size, n), dtype=np.int32)
        self.fit_in = cuda.device_array(size, dtype=np.int64)
        self.fit_out = cuda.device_array(size, dtype=np.int64)
        n_moves = 1 + 2 * arrays.n_merchants
        self.cand_genes = cuda.device_array((n_moves, n), dtype=np.int32)
        self.cand_fit = cuda.device_array(n_moves, dtype=np.int64)
        self.status = cuda.to_device(np.zeros(4, dtype=np.int64))
        self._status: np.ndarray | None = None

    def _problem_arrays(self, arrays: GaArrays) -> tuple[np.ndarray, ...]:
        """The cart's arrays in the kernels' argument order."""
        return (arrays.qty, arrays.price, arrays.cand, arrays.cnt, arrays.params)

    def _kernels(self) -> tuple:
        """(first population, generation, elite move) kernels for this kind of cart."""
        return _init_kernel, _evolve_kernel, _elite_kernel

    def initialise(self, *, deadline: float | None = None) -> None:
        seeded = seeded_individuals(self.arrays, self.config.population)
        self._init[self.config.population, self.threads](
            self.genes_in,
            self.fit_in,
            cuda.to_device(seeded),
            seeded.shape[0],
            self.states,
            self.config.child_ls_steps,
            *self.problem,
        )
        self._status = None

    def best(self) -> tuple[int, int]:
        if self._status is None:
            _argmin_kernel[1, self.threads](self.fit_in, self.status)
            self._status = self.status.copy_to_host()
        return int(self._status[0]), int(self._status[1])

    def elite(self, slot: int, *, deadline: float | None = None) -> bool:
        self.best()
        n_moves = self.cand_fit.size
        self._elite[n_moves, self.threads](
            self.genes_in,
            self.status,
            self.config.elite_ls_steps,
            self.cand_genes,
            self.cand_fit,
            *self.problem,
        )
        _pick_kernel[1, self.threads](
            self.genes_in, self.fit_in, self.status, self.cand_genes, self.cand_fit
        )
        self._status = self.status.copy_to_host()
        return int(self._status[2]) >= 0

    def generation(self, elite_slot: int, *, deadline: float | None = None) -> None:
        tour, p_cross, p_mut, ls_steps = self.config.knobs()
        self._evolve[self.config.population, self.threads](
            self.genes_in,
            self.fit_in,
            self.genes_out,
            self.fit_out,
            elite_slot,
            self.states,
            tour,
            p_cross,
            p_mut,
            ls_steps,
            *self.problem,
        )
        self.genes_in, self.genes_out = self.genes_out, self.genes_in
        self.fit_in, self.fit_out = self.fit_out, self.fit_in
        self._status = None

    def genes(self, slot: int) -> np.ndarray:
        return self.genes_in[slot].copy_to_host()

    def population(self) -> tuple[np.ndarray, np.ndarray]:
        """(genes, fitness) on the host, for parity checks."""
        return self.genes_in.copy_to_host(), self.fit_in.copy_to_host()
