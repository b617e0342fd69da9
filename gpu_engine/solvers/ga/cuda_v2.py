"""The genetic algorithm's CUDA kernels for version 2 carts (a gene is a merchant's node) and
their population; CPU twin: :mod:`gpu_engine.solvers.ga.cpu_v2`.

The mapping of :mod:`.cuda` (block ``s`` builds slot ``s``'s child, block ``j`` tries elite move
``j``, thread ``t`` owns lines, columns, owners and pairs ``t, t + T, ...``), with the child's
state of :mod:`.ops_v2` in shared memory: ``cst[4, MAX_MERCHANTS]`` per column and
``ost[4, MAX_MERCHANTS]`` per owner (an owner has at least one column). The argmin and pick
kernels are :mod:`.cuda`'s: they see fitness values only.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int32, int64, uint64
from numba.cuda.random import xoroshiro128p_next

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
)
from gpu_engine.solvers.ga.cuda import MAX_LINES, MAX_MERCHANTS, MAX_THREADS, GpuPopulation
from gpu_engine.solvers.ga.cuda_blocks import copy_row
from gpu_engine.solvers.ga.cuda_blocks_v2 import aggregate, close, descend, grow, mutate
from gpu_engine.solvers.ga.ops_v2 import N_STATE, S_UNITS
from gpu_engine.solvers.ga.rng import rand_below, rand_chance

_crossover_lines = cuda.jit(device=True)(ga_ops.crossover_lines)
_tournament = cuda.jit(device=True)(ga_ops.tournament)


@cuda.jit(cache=True)
def _init_kernel(
    genes,
    fit,
    seeded,
    n_seeded,
    states,
    ls_steps,
    qty,
    wgt,
    price,
    cand,
    cnt,
    colp,
    tier_up,
    tier_fee,
    ownp,
):
    """Block s: slot s gets seeded row s (s < n_seeded) or a random eligible column per line
    (thread 0, one draw per line), then descent and its fitness (cpu_v2.initialise_slots)."""
    slot = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    n = qty.size
    child = cuda.shared.array(MAX_LINES, int32)[:n]
    cst = cuda.shared.array((N_STATE, MAX_MERCHANTS), int64)
    ost = cuda.shared.array((N_STATE, MAX_MERCHANTS), int64)
    removal = cuda.shared.array(MAX_LINES, int64)[:n]
    red_v = cuda.shared.array(MAX_THREADS, int64)
    red_i = cuda.shared.array(MAX_THREADS, int64)
    if slot < n_seeded:
        copy_row(seeded[slot], child)
    elif tid == 0:
        for i in range(n):
            child[i] = cand[i, rand_below(xoroshiro128p_next(states, slot), cnt[i])]
    cuda.syncthreads()
    total = aggregate(child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost, red_v)
    total = descend(
        ls_steps,
        total,
        child,
        qty,
        wgt,
        price,
        cand,
        cnt,
        colp,
        tier_up,
        tier_fee,
        ownp,
        cst,
        ost,
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
    wgt,
    price,
    cand,
    cnt,
    colp,
    tier_up,
    tier_fee,
    ownp,
):
    """Block s: the child of slot s (cpu_v2.make_child); it replaces the slot's individual in
    the output population unless it is worse."""
    slot = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    n = qty.size
    child = cuda.shared.array(MAX_LINES, int32)[:n]
    cst = cuda.shared.array((N_STATE, MAX_MERCHANTS), int64)
    ost = cuda.shared.array((N_STATE, MAX_MERCHANTS), int64)
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
    total = aggregate(child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost, red_v)
    if rand_chance(draws[D_MUT], p_mut):
        total = mutate(
            draws,
            total,
            child,
            genes_in[elite_slot],
            qty,
            wgt,
            price,
            cand,
            cnt,
            colp,
            tier_up,
            tier_fee,
            ownp,
            cst,
            ost,
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
        wgt,
        price,
        cand,
        cnt,
        colp,
        tier_up,
        tier_fee,
        ownp,
        cst,
        ost,
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
def _elite_kernel(
    genes,
    status,
    steps,
    cand_genes,
    cand_fit,
    qty,
    wgt,
    price,
    cand,
    cnt,
    colp,
    tier_up,
    tier_fee,
    ownp,
):
    """Block j: elite move j (cpu_v2.elite_candidate) on a copy of the individual in slot
    status[0]; writes the result to cand_genes[j] / cand_fit[j]."""
    j = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    n = qty.size
    n_columns = colp.shape[1]
    child = cuda.shared.array(MAX_LINES, int32)[:n]
    cst = cuda.shared.array((N_STATE, MAX_MERCHANTS), int64)
    ost = cuda.shared.array((N_STATE, MAX_MERCHANTS), int64)
    removal = cuda.shared.array(MAX_LINES, int64)[:n]
    keys = cuda.shared.array(MAX_LINES, int64)[:n]
    order = cuda.shared.array(MAX_LINES, int64)[:n]
    red_v = cuda.shared.array(MAX_THREADS, int64)
    red_i = cuda.shared.array(MAX_THREADS, int64)
    copy_row(genes[status[0]], child)
    cuda.syncthreads()
    total = aggregate(child, qty, wgt, price, colp, tier_up, tier_fee, ownp, cst, ost, red_v)
    if 1 <= j <= n_columns:
        total = grow(
            j - 1,
            child,
            qty,
            wgt,
            price,
            colp,
            tier_up,
            tier_fee,
            ownp,
            cst,
            ost,
            removal,
            keys,
            order,
            red_v,
            red_i,
        )
    elif j > n_columns:
        u = j - 1 - n_columns
        if cst[S_UNITS, u] == 0:
            if tid == 0:
                cand_fit[j] = NO_CANDIDATE
            return
        total = close(
            u, child, qty, wgt, price, cand, cnt, colp, tier_up, tier_fee, ownp, cst, ost, red_v
        )
    total = descend(
        steps,
        total,
        child,
        qty,
        wgt,
        price,
        cand,
        cnt,
        colp,
        tier_up,
        tier_fee,
        ownp,
        cst,
        ost,
        removal,
        red_v,
        red_i,
    )
    copy_row(child, cand_genes[j])
    if tid == 0:
        cand_fit[j] = total


class GpuPopulationV2(GpuPopulation):
    """:class:`.cuda.GpuPopulation` stepped by the version 2 kernels above."""

    def _problem_arrays(self, arrays: GaArrays) -> tuple[np.ndarray, ...]:
        return arrays.v2_problem()

    def _kernels(self) -> tuple:
        return _init_kernel, _evolve_kernel, _elite_kernel
