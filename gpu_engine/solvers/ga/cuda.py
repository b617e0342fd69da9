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
``t, t + T, ...``, then a tree reduction keeps the lowest (value, index).

Capacity: carts up to ``MAX_LINES`` lines and ``MAX_MERCHANTS`` merchants able to serve a line
(shared-memory arrays have compile-time sizes); larger carts are refused with a CapacityError
and the planner gives them to the CPU twin.
"""

from __future__ import annotations

import threading

import numpy as np
from numba import cuda, int32, int64, uint64
from numba.cuda.random import xoroshiro128p_dtype, xoroshiro128p_next

from gpu_engine.cuda_ops.reduce import group_min_in
from gpu_engine.device import gpu_name, simulator_enabled
from gpu_engine.problem import CapacityError
from gpu_engine.solvers.ga import ops as ga_ops
from gpu_engine.solvers.ga.core import (
    D_CROSS,
    D_KIND,
    D_LINE,
    D_MASK,
    D_MUT,
    D_PICK,
    D_TOUR_A,
    D_TOUR_B,
    MUT_ELITE_GROUP,
    MUT_EMPTY_MERCHANT,
    MUT_GROW_MERCHANT,
    MUT_MOVE_TO_USED,
    MUT_RANDOM_LINE,
    N_DRAWS,
    N_MUTATIONS,
    NO_CANDIDATE,
    NO_MOVE,
    GaArrays,
    GaConfig,
    rand_below,
    rand_chance,
    rng_states,
    seeded_individuals,
)

MAX_LINES = 256
MAX_MERCHANTS = 512
MAX_THREADS = 128
# The simulator runs one Python thread per CUDA thread: keep its blocks small.
SIM_THREADS = 32

_merchant_costs = cuda.jit(device=True)(ga_ops.merchant_costs)
_removals = cuda.jit(device=True)(ga_ops.removals)
_scan_pairs = cuda.jit(device=True)(ga_ops.scan_pairs)
_close_lines = cuda.jit(device=True)(ga_ops.close_lines)
_grow_keys = cuda.jit(device=True)(ga_ops.grow_keys)
_grow_order = cuda.jit(device=True)(ga_ops.grow_order)
_grow_scan = cuda.jit(device=True)(ga_ops.grow_scan)
_grow_apply = cuda.jit(device=True)(ga_ops.grow_apply)
_crossover_lines = cuda.jit(device=True)(ga_ops.crossover_lines)
_copy_group = cuda.jit(device=True)(ga_ops.copy_group)
_argmin_range = cuda.jit(device=True)(ga_ops.argmin_range)
_move_line = cuda.jit(device=True)(ga_ops.move_line)
_used_target = cuda.jit(device=True)(ga_ops.used_target)
_tournament = cuda.jit(device=True)(ga_ops.tournament)


# --- block-level building blocks (every thread of the block calls them) -----------------------


@cuda.jit(device=True)
def _block_sum(value, red_v):
    """Sum of every thread's ``value``, returned to all threads."""
    tid = cuda.threadIdx.x
    red_v[tid] = value
    cuda.syncthreads()
    half = cuda.blockDim.x // 2
    while half > 0:
        if tid < half:
            red_v[tid] += red_v[tid + half]
        cuda.syncthreads()
        half //= 2
    total = red_v[0]
    cuda.syncthreads()
    return total


@cuda.jit(device=True)
def _block_best(value, index, red_v, red_i):
    """Lowest (value, index) over the threads, returned to all; an index < 0 is no entry."""
    return group_min_in(value, index, cuda.blockDim.x, red_v, red_i)


@cuda.jit(device=True)
def _copy_row(src, dst):
    tid = cuda.threadIdx.x
    for i in range(tid, dst.size, cuda.blockDim.x):
        dst[i] = src[i]


@cuda.jit(device=True)
def _aggregate(child, qty, price, params, sub, units, mcost, red_v):
    """Per-merchant state of ``child`` from scratch; returns the total to every thread."""
    tid = cuda.threadIdx.x
    step = cuda.blockDim.x
    for m in range(tid, sub.size, step):
        sub[m] = 0
        units[m] = 0
    cuda.syncthreads()
    for i in range(tid, child.size, step):
        m = child[i]
        cuda.atomic.add(sub, m, qty[i] * price[i, m])
        cuda.atomic.add(units, m, qty[i])
    cuda.syncthreads()
    part = _merchant_costs(tid, step, sub, units, params, mcost)
    return _block_sum(part, red_v)


@cuda.jit(device=True)
def _descend(
    steps, total, child, qty, price, cand, cnt, params, sub, units, mcost, removal, red_v, red_i
):
    """Up to ``steps`` best single-line moves (ga_cpu.descend); returns the total."""
    tid = cuda.threadIdx.x
    step = cuda.blockDim.x
    width = cand.shape[1]
    for _ in range(steps):
        _removals(tid, step, child, qty, price, params, sub, units, mcost, removal)
        cuda.syncthreads()
        delta, pair = _scan_pairs(
            tid, step, child, removal, qty, price, cand, cnt, params, sub, units, mcost
        )
        delta, pair = _block_best(delta, pair, red_v, red_i)
        if pair == NO_MOVE:
            break
        if tid == 0:
            i = pair // width
            _move_line(i, cand[i, pair - i * width], child, qty, price, params, sub, units, mcost)
        total += delta
        cuda.syncthreads()
    return total


@cuda.jit(device=True)
def _close(u, child, qty, price, cand, cnt, params, sub, units, mcost, red_v):
    """Empty merchant ``u`` (ga_cpu.close_merchant); returns the new total."""
    _close_lines(
        cuda.threadIdx.x,
        cuda.blockDim.x,
        u,
        child,
        qty,
        price,
        cand,
        cnt,
        params,
        sub,
        units,
        mcost,
    )
    cuda.syncthreads()
    return _aggregate(child, qty, price, params, sub, units, mcost, red_v)


@cuda.jit(device=True)
def _grow(m, child, qty, price, params, sub, units, mcost, removal, keys, order, red_v, red_i):
    """Grow merchant ``m`` (ga_cpu.grow_merchant); returns the new total."""
    tid = cuda.threadIdx.x
    step = cuda.blockDim.x
    _removals(tid, step, child, qty, price, params, sub, units, mcost, removal)
    cuda.syncthreads()
    count = _block_sum(_grow_keys(tid, step, m, child, removal, qty, price, keys), red_v)
    if count > 0:
        _grow_order(tid, step, keys, order)
        cuda.syncthreads()
        # One thread scans the prefixes in order (ga_ops.grow_scan), moving the lines
        # virtually through the shared per-merchant state; the others wait.
        if tid == 0:
            _, length = _grow_scan(m, count, order, child, qty, price, params, sub, units, mcost)
            red_i[0] = length
        cuda.syncthreads()
        length = red_i[0]
        cuda.syncthreads()
        _grow_apply(tid, step, m, length, order, child)
        cuda.syncthreads()
    return _aggregate(child, qty, price, params, sub, units, mcost, red_v)


@cuda.jit(device=True)
def _single_move(b, i, child, qty, price, params, sub, units, mcost, shared_total):
    """Thread 0 moves line ``i`` to ``b`` (if b >= 0); the change reaches every thread."""
    if cuda.threadIdx.x == 0:
        shared_total[0] = 0
        if b >= 0 and b != child[i]:
            shared_total[0] = _move_line(i, b, child, qty, price, params, sub, units, mcost)
    cuda.syncthreads()
    delta = shared_total[0]
    cuda.syncthreads()
    return delta


@cuda.jit(device=True)
def _mutate(
    draws,
    total,
    child,
    elite,
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
):
    """The mutation the draws select (ga_cpu.mutate); returns the new total."""
    kind = rand_below(draws[D_KIND], N_MUTATIONS)
    i = rand_below(draws[D_LINE], child.size)
    if kind == MUT_MOVE_TO_USED:
        b = -1
        if cuda.threadIdx.x == 0:
            b = _used_target(i, draws[D_PICK], child, cand, cnt, units)
        total += _single_move(b, i, child, qty, price, params, sub, units, mcost, shared_total)
    elif kind == MUT_EMPTY_MERCHANT:
        u = child[i]
        cuda.syncthreads()
        total = _close(u, child, qty, price, cand, cnt, params, sub, units, mcost, red_v)
    elif kind == MUT_ELITE_GROUP:
        _copy_group(cuda.threadIdx.x, cuda.blockDim.x, elite, elite[i], child)
        cuda.syncthreads()
        total = _aggregate(child, qty, price, params, sub, units, mcost, red_v)
    elif kind == MUT_GROW_MERCHANT:
        m = cand[i, rand_below(draws[D_PICK], cnt[i])]
        total = _grow(
            m, child, qty, price, params, sub, units, mcost, removal, keys, order, red_v, red_i
        )
    elif kind == MUT_RANDOM_LINE:
        b = cand[i, rand_below(draws[D_PICK], cnt[i])]
        total += _single_move(b, i, child, qty, price, params, sub, units, mcost, shared_total)
    return total


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
        _copy_row(seeded[slot], child)
    elif tid == 0:
        for i in range(n):
            child[i] = cand[i, rand_below(xoroshiro128p_next(states, slot), cnt[i])]
    cuda.syncthreads()
    total = _aggregate(child, qty, price, params, sub, units, mcost, red_v)
    total = _descend(
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
    _copy_row(child, genes[slot])
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
    total = _aggregate(child, qty, price, params, sub, units, mcost, red_v)
    if rand_chance(draws[D_MUT], p_mut):
        total = _mutate(
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
    total = _descend(
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
        _copy_row(child, genes_out[slot])
        if tid == 0:
            fit_out[slot] = total
    else:
        _copy_row(genes_in[slot], genes_out[slot])
        if tid == 0:
            fit_out[slot] = fit_in[slot]


@cuda.jit(cache=True)
def _argmin_kernel(fit, status):
    """One block: status[0], status[1] = slot and value of the lowest fitness."""
    value, slot = _argmin_range(cuda.threadIdx.x, cuda.blockDim.x, fit)
    red_v = cuda.shared.array(MAX_THREADS, int64)
    red_i = cuda.shared.array(MAX_THREADS, int64)
    value, slot = _block_best(value, slot, red_v, red_i)
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
    _copy_row(genes[status[0]], child)
    cuda.syncthreads()
    total = _aggregate(child, qty, price, params, sub, units, mcost, red_v)
    if 1 <= j <= n_merchants:
        total = _grow(
            j - 1, child, qty, price, params, sub, units, mcost, removal, keys, order, red_v, red_i
        )
    elif j > n_merchants:
        u = j - 1 - n_merchants
        if units[u] == 0:
            if tid == 0:
                cand_fit[j] = NO_CANDIDATE
            return
        total = _close(u, child, qty, price, cand, cnt, params, sub, units, mcost, red_v)
    total = _descend(
        steps, total, child, qty, price, cand, cnt, params, sub, units, mcost, removal, red_v, red_i
    )
    _copy_row(child, cand_genes[j])
    if tid == 0:
        cand_fit[j] = total


@cuda.jit(cache=True)
def _pick_kernel(genes, fit, status, cand_genes, cand_fit):
    """One block (ga_cpu.elite_pass's choice): the best elite move replaces the individual in
    slot status[0] when strictly better; status[1] = its fitness, status[2] = the move or -1."""
    red_v = cuda.shared.array(MAX_THREADS, int64)
    red_i = cuda.shared.array(MAX_THREADS, int64)
    value, j = _argmin_range(cuda.threadIdx.x, cuda.blockDim.x, cand_fit)
    value, j = _block_best(value, j, red_v, red_i)
    slot = status[0]
    improved = j >= 0 and value < fit[slot]
    cuda.syncthreads()
    if improved:
        _copy_row(cand_genes[j], genes[slot])
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
        self.problem = tuple(
            cuda.to_device(a)
            for a in (arrays.qty, arrays.price, arrays.cand, arrays.cnt, arrays.params)
        )
        self.genes_in = cuda.device_array((size, n), dtype=np.int32)
        self.genes_out = cuda.device_array((size, n), dtype=np.int32)
        self.fit_in = cuda.device_array(size, dtype=np.int64)
        self.fit_out = cuda.device_array(size, dtype=np.int64)
        n_moves = 1 + 2 * arrays.n_merchants
        self.cand_genes = cuda.device_array((n_moves, n), dtype=np.int32)
        self.cand_fit = cuda.device_array(n_moves, dtype=np.int64)
        self.status = cuda.to_device(np.zeros(4, dtype=np.int64))
        self._status: np.ndarray | None = None

    def initialise(self, *, deadline: float | None = None) -> None:
        seeded = seeded_individuals(self.arrays, self.config.population)
        _init_kernel[self.config.population, self.threads](
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
        _elite_kernel[n_moves, self.threads](
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
        _evolve_kernel[self.config.population, self.threads](
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
