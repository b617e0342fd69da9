"""What the genetic algorithm's CPU twin and CUDA kernels share.

* :class:`GaConfig` (the knobs) and :class:`GaArrays` (the cart compacted for the GA).
* Where each decision takes its random number from (``D_*``) and the mutation kinds; the
  numbers themselves come from :mod:`gpu_engine.solvers.ga.rng`.
* Scalar ``numba.njit`` helpers called by both the CPU twin and, as device functions, the CUDA
  kernels, so both price with the same routine (:func:`gpu_engine.pricing.merchant_cost`). They
  take scalars only: inside the CUDA simulator kernel arguments are Python wrappers that an njit
  function cannot accept.
* :func:`seed_population`, the host-side seeded individuals.

Chromosome: one compact merchant index per line (int32), always one of the line's eligible
merchants. Fitness: the spec's exact total in cents (int64).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numba
import numpy as np

from gpu_engine.pricing import merchant_cost
from gpu_engine.problem import CartProblem
from gpu_engine.solvers.ga.rng import PROB_ONE

# Random numbers drawn per child and generation, always all of them (reproducibility): where
# each decision takes its draw from.
MAX_TOURNAMENT = 4
D_TOUR_A = 0
D_TOUR_B = D_TOUR_A + MAX_TOURNAMENT
D_CROSS = D_TOUR_B + MAX_TOURNAMENT
D_MASK = D_CROSS + 1
D_MUT = D_MASK + 1
D_KIND = D_MUT + 1
D_LINE = D_KIND + 1
D_PICK = D_LINE + 1
N_DRAWS = D_PICK + 1

# Mutation kinds (the line and merchant they act on come from D_LINE / D_PICK).
MUT_MOVE_TO_USED = 0  # a line moves to another merchant the child already uses
MUT_EMPTY_MERCHANT = 1  # every line of a merchant in use goes elsewhere
MUT_ELITE_GROUP = 2  # the best individual's group for one merchant is copied in
MUT_GROW_MERCHANT = 3  # a merchant takes the best prefix of the lines it could serve
MUT_RANDOM_LINE = 4  # a line takes a random eligible merchant
N_MUTATIONS = 5

NO_MOVE = -1
# Fitness of an elite-pass candidate that does not apply (closing a merchant not in use).
NO_CANDIDATE = np.iinfo(np.int64).max


@dataclass(frozen=True)
class GaConfig:
    """Knobs of a GA run.

    ``population``: individuals (thousands on a GPU, about a hundred on a CPU core).
    ``tournament``: contestants per parent (1..4). ``p_crossover``/``p_mutation``: per child.
    ``child_ls_steps``: best single-line moves tried on every child (0 = none).
    ``elite_ls_steps``: descent steps after each move of the elite pass.
    ``stall_generations``: stop after this many generations without a better best.
    ``max_generations``: hard cap (None: the budget or the stall decides).
    ``grow_to``/``grow_after`` (CPU only): after ``grow_after`` generations without a better
    best the population doubles, the new slots random, until it has ``grow_to`` individuals;
    only then does a stall stop the run. Small populations evolve fast in short budgets, the
    larger ones keep long runs diverse, and the run stays a pure function of its steps.
    """

    population: int = 128
    tournament: int = 2
    p_crossover: float = 0.9
    p_mutation: float = 0.7
    child_ls_steps: int = 4
    elite_ls_steps: int = 8
    stall_generations: int = 60
    max_generations: int | None = None
    grow_to: int | None = None
    grow_after: int = 50

    def __post_init__(self) -> None:
        if self.population < 2:
            raise ValueError("population must be at least 2")
        if not 1 <= self.tournament <= MAX_TOURNAMENT:
            raise ValueError(f"tournament must be in 1..{MAX_TOURNAMENT}")
        for name in ("p_crossover", "p_mutation"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be a probability")
        if min(self.child_ls_steps, self.elite_ls_steps) < 0 or self.stall_generations < 1:
            raise ValueError("descent steps must be >= 0 and stall_generations >= 1")
        if self.max_generations is not None and self.max_generations < 0:
            raise ValueError("max_generations must be >= 0")
        if self.grow_after < 1:
            raise ValueError("grow_after must be >= 1")

    def with_(self, **changes) -> GaConfig:
        return replace(self, **changes)

    def knobs(self) -> tuple[int, int, int, int]:
        """(tournament, p_crossover, p_mutation, child_ls_steps), probabilities as integers out
        of ``PROB_ONE``: what the generation step takes."""
        return (
            self.tournament,
            round(self.p_crossover * PROB_ONE),
            round(self.p_mutation * PROB_ONE),
            self.child_ls_steps,
        )


@dataclass(frozen=True, eq=False)
class GaArrays:
    """The cart as the GA sees it: merchants no line can use are dropped (compact indexes).

    ``qty`` int64[n]; ``price`` int64[n, mc] unit price or -1; ``cand`` int32[n, w] eligible
    compact merchants by ascending price, padded -1; ``cnt`` int32[n]; ``params`` int64[5, mc],
    the merchant arrays in pricing order (base fee, per extra unit, free over, discount min
    units, discount bp); ``merchants`` int64[mc], the original index of each.
    """

    problem: CartProblem
    qty: np.ndarray
    price: np.ndarray
    cand: np.ndarray
    cnt: np.ndarray
    params: np.ndarray
    merchants: np.ndarray
    # A version 2 cart's nodes, tiers and owners (None: a simple cart, priced by ``params``).
    fulfil: FulfilArrays | None = None

    @property
    def n_lines(self) -> int:
        return int(self.qty.size)

    @property
    def n_merchants(self) -> int:
        return int(self.merchants.size)

    @property
    def width(self) -> int:
        return int(self.cand.shape[1])

    def to_original(self, genes: np.ndarray) -> np.ndarray:
        """Original merchant index per line for a chromosome of compact indexes."""
        return self.merchants[np.asarray(genes, dtype=np.int64)]

    def v2_problem(self) -> tuple[np.ndarray, ...]:
        """The problem arrays of :mod:`.ops_v2`, in their argument order."""
        f = self.fulfil
        assert f is not None, "a simple cart has no version 2 arrays"
        return (
            self.qty,
            f.wgt,
            self.price,
            self.cand,
            self.cnt,
            f.colp,
            f.tier_up,
            f.tier_fee,
            f.ownp,
        )


@dataclass(frozen=True, eq=False)
class FulfilArrays:
    """A version 2 cart's columns as the GA sees them (compact columns and owners): ``wgt``
    int64[n] grams a unit; ``colp`` int64[5, mc] (:mod:`.ops_v2`'s ``C_*`` rows: base fee, per
    extra unit, compact owner, tier count, per kg over); ``tier_up``/``tier_fee`` int64[mc, T];
    ``ownp`` int64[3, mo] (free over, discount units, basis points); ``owners`` the original
    merchant index of each compact owner."""

    wgt: np.ndarray
    colp: np.ndarray
    tier_up: np.ndarray
    tier_fee: np.ndarray
    ownp: np.ndarray
    owners: np.ndarray


def _fulfil_arrays(problem: CartProblem, used: np.ndarray) -> FulfilArrays:
    f = problem.fulfillment
    owner_of = f.column_owner[used]
    owners = np.unique(owner_of)
    compact_owner = np.searchsorted(owners, owner_of)
    colp = np.stack(
        [
            problem.base_fee[used],
            problem.per_extra_unit[used],
            compact_owner,
            f.tier_count[used],
            f.per_kg_over[used],
        ]
    )
    ownp = np.stack([p[owners] for p in f.owner_params])
    return FulfilArrays(
        wgt=np.ascontiguousarray(f.weight, dtype=np.int64),
        colp=np.ascontiguousarray(colp, dtype=np.int64),
        tier_up=np.ascontiguousarray(f.tier_up[used], dtype=np.int64),
        tier_fee=np.ascontiguousarray(f.tier_fee[used], dtype=np.int64),
        ownp=np.ascontiguousarray(ownp, dtype=np.int64),
        owners=owners.astype(np.int64),
    )


def ga_arrays(problem: CartProblem) -> GaArrays:
    used = np.unique(problem.cand_merchant[problem.cand_merchant >= 0]).astype(np.int64)
    compact = np.full(problem.n_merchants, -1, dtype=np.int32)
    compact[used] = np.arange(used.size, dtype=np.int32)
    cand = np.where(problem.cand_merchant >= 0, compact[problem.cand_merchant], -1)
    return GaArrays(
        problem=problem,
        qty=np.ascontiguousarray(problem.quantity, dtype=np.int64),
        price=np.ascontiguousarray(problem.price[:, used], dtype=np.int64),
        cand=np.ascontiguousarray(cand, dtype=np.int32),
        cnt=np.ascontiguousarray(problem.cand_count, dtype=np.int32),
        params=np.ascontiguousarray(
            np.stack([p[used] for p in problem.merchant_params]), dtype=np.int64
        ),
        merchants=used,
        fulfil=None if problem.simple else _fulfil_arrays(problem, used),
    )


# --- scalar helpers shared by the CPU twin and the kernels ------------------------------------


@numba.njit(cache=True)
def group_bit(mask_seed, merchant):
    """A pseudo-random bit per merchant from one draw (splitmix64 finaliser), so that crossover
    imports whole merchant groups: every line of a group sees the same bit."""
    z = mask_seed ^ (np.uint64(merchant + 1) * np.uint64(0x9E3779B97F4A7C15))
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(63)) == np.uint64(1)


@numba.njit(cache=True)
def cost_with(sub, units, add_sub, add_units, base, per, free_over, dmin, dbp):
    """A merchant's cost after adding (or, with negative amounts, removing) a line."""
    return merchant_cost(sub + add_sub, units + add_units, base, per, free_over, dmin, dbp)


# --- seeded individuals -------------------------------------------------------------------------


@numba.njit(cache=True)
def _fill_threshold(out, cheapest, qty, price, m, params):
    """Cheapest per line, then lines moved to ``m`` by ascending extra cost until ``m``'s goods
    (after its discount) reach its free-shipping threshold. False when they cannot."""
    n = qty.size
    out[:] = cheapest
    sub = 0
    units = 0
    others = 0
    for i in range(n):
        if price[i, m] >= 0 and cheapest[i] != m:
            others += 1
    lines = np.empty(others, dtype=np.int64)
    extra = np.empty(others, dtype=np.int64)
    k = 0
    for i in range(n):
        if price[i, m] < 0:
            continue
        if cheapest[i] == m:
            sub += qty[i] * price[i, m]
            units += qty[i]
        else:
            lines[k] = i
            extra[k] = qty[i] * (price[i, m] - price[i, cheapest[i]])
            k += 1
    # Only the lines m could take are sorted (by extra cost, then line): on a large cart a
    # merchant offers a few of them, and sorting every line per merchant is slow.
    for r in np.argsort(extra, kind="mergesort"):
        goods = merchant_cost(sub, units, 0, 0, -1, params[3, m], params[4, m])
        if units > 0 and goods >= params[2, m]:
            return True
        i = lines[r]
        out[i] = m
        sub += qty[i] * price[i, m]
        units += qty[i]
    goods = merchant_cost(sub, units, 0, 0, -1, params[3, m], params[4, m])
    return units > 0 and goods >= params[2, m]


@numba.njit(cache=True)
def _cost_of(m, sub, units, params):
    return merchant_cost(
        sub, units, params[0, m], params[1, m], params[2, m], params[3, m], params[4, m]
    )


@numba.njit(cache=True)
def _close_delta(m, out, qty, price, cand, params, is_open, sub, units, mcost, dsub, dunits):
    """The exact change of the total when every line of ``m`` moves to the open merchant where it
    adds least (each line judged alone), and where the lines go (``dsub``/``dunits``, which the
    caller clears). Returns (delta, feasible)."""
    n = qty.size
    for i in range(n):
        if out[i] != m:
            continue
        best_j = -1
        best_add = np.int64(0)
        for k in range(cand.shape[1]):
            j = cand[i, k]
            if j < 0:
                break
            if j == m or not is_open[j]:
                continue
            add = qty[i] * price[i, j]
            extra = _cost_of(j, sub[j] + dsub[j] + add, units[j] + dunits[j] + qty[i], params)
            extra -= _cost_of(j, sub[j] + dsub[j], units[j] + dunits[j], params)
            if best_j < 0 or extra < best_add:
                best_j, best_add = j, extra
        if best_j < 0:
            return np.int64(0), False
        dsub[best_j] += qty[i] * price[i, best_j]
        dunits[best_j] += qty[i]
    delta = -mcost[m]
    for j in range(dsub.size):
        if dunits[j] > 0:
            delta += _cost_of(j, sub[j] + dsub[j], units[j] + dunits[j], params) - mcost[j]
    return delta, True


# Passes of the drop seed's single-line descent (each pass tries every line once).
_POLISH_PASSES = 20


@numba.njit(cache=True)
def _polish(out, qty, price, cand, params, sub, units, mcost):
    """Single-line moves, each line to the merchant that lowers the exact total most, pass after
    pass until none does (or ``_POLISH_PASSES``): the drop heuristic judges lines alone when it
    closes a merchant, which leaves cheap moves for this."""
    for _ in range(_POLISH_PASSES):
        moved = False
        for i in range(qty.size):
            a = out[i]
            amount = qty[i] * price[i, a]
            base = _cost_of(a, sub[a] - amount, units[a] - qty[i], params) - mcost[a]
            best_j = a
            best_delta = np.int64(0)
            for k in range(cand.shape[1]):
                j = cand[i, k]
                if j < 0:
                    break
                if j == a:
                    continue
                add = qty[i] * price[i, j]
                delta = base + _cost_of(j, sub[j] + add, units[j] + qty[i], params) - mcost[j]
                if delta < best_delta:
                    best_j, best_delta = j, delta
            if best_j != a:
                j = best_j
                sub[a] -= amount
                units[a] -= qty[i]
                mcost[a] = _cost_of(a, sub[a], units[a], params)
                sub[j] += qty[i] * price[i, j]
                units[j] += qty[i]
                mcost[j] = _cost_of(j, sub[j], units[j], params)
                out[i] = j
                moved = True
        if not moved:
            return


@numba.njit(cache=True)
def drop_greedy(out, qty, price, cand, params):
    """The classic "drop" heuristic of facility location, priced exactly: every line at its
    cheapest offer, then, while it lowers the total, the merchant whose closing lowers it most is
    closed (its lines moving to the open merchants where they add least), then single-line moves
    polish it (:func:`_polish`). On carts where the
    shipping of many merchants outweighs price differences (zero prices, ties, fixed fees, 100%
    discounts) the cheapest-offer seed is far from the optimum and this one is close to it."""
    n = qty.size
    n_merchants = price.shape[1]
    is_open = np.ones(n_merchants, dtype=np.bool_)
    sub = np.zeros(n_merchants, dtype=np.int64)
    units = np.zeros(n_merchants, dtype=np.int64)
    mcost = np.zeros(n_merchants, dtype=np.int64)
    dsub = np.zeros(n_merchants, dtype=np.int64)
    dunits = np.zeros(n_merchants, dtype=np.int64)
    for i in range(n):
        out[i] = cand[i, 0]
        sub[out[i]] += qty[i] * price[i, out[i]]
        units[out[i]] += qty[i]
    for m in range(n_merchants):
        mcost[m] = _cost_of(m, sub[m], units[m], params)
    while True:
        best_m = -1
        best_delta = np.int64(0)
        for m in range(n_merchants):
            if not is_open[m] or units[m] == 0:
                continue
            dsub[:] = 0
            dunits[:] = 0
            delta, ok = _close_delta(
                m, out, qty, price, cand, params, is_open, sub, units, mcost, dsub, dunits
            )
            if ok and delta < best_delta:
                best_m, best_delta = m, delta
        if best_m < 0:
            _polish(out, qty, price, cand, params, sub, units, mcost)
            return
        dsub[:] = 0
        dunits[:] = 0
        _close_delta(
            best_m, out, qty, price, cand, params, is_open, sub, units, mcost, dsub, dunits
        )
        # Replays the chosen move, now writing where each line goes.
        is_open[best_m] = False
        for i in range(n):
            if out[i] != best_m:
                continue
            best_j = -1
            best_add = np.int64(0)
            for k in range(cand.shape[1]):
                j = cand[i, k]
                if j < 0:
                    break
                if not is_open[j]:
                    continue
                add = qty[i] * price[i, j]
                extra = _cost_of(j, sub[j] + add, units[j] + qty[i], params)
                extra -= _cost_of(j, sub[j], units[j], params)
                if best_j < 0 or extra < best_add:
                    best_j, best_add = j, extra
            out[i] = best_j
            sub[best_j] += qty[i] * price[i, best_j]
            units[best_j] += qty[i]
            mcost[best_j] = _cost_of(best_j, sub[best_j], units[best_j], params)
        sub[best_m] = 0
        units[best_m] = 0
        mcost[best_m] = 0


@numba.njit(cache=True)
def seed_population(seeded, qty, price, cand, params):
    """Write seeded individuals into the rows of ``seeded``; returns how many were written.

    Row 0: cheapest offer per line; row 1 the drop heuristic (:func:`drop_greedy`). Then, per
    merchant with a reachable free-shipping threshold,
    the greedy fill of that threshold; then, per merchant serving two or more lines,
    consolidation (every line it can serve moved to it).
    """
    n = qty.size
    n_merchants = price.shape[1]
    limit = seeded.shape[0]
    cheapest = cand[:, 0].copy()
    seeded[0, :] = cheapest
    rows = 1
    row = np.empty(n, dtype=np.int32)
    if limit > 1:
        drop_greedy(row, qty, price, cand, params)
        seeded[1, :] = row
        rows = 2
    for m in range(n_merchants):
        if rows >= limit:
            return rows
        if params[2, m] > 0 and _fill_threshold(row, cheapest, qty, price, m, params):
            seeded[rows, :] = row
            rows += 1
    for m in range(n_merchants):
        if rows >= limit:
            return rows
        served = 0
        for i in range(n):
            if price[i, m] >= 0:
                served += 1
        if served < 2:
            continue
        for i in range(n):
            seeded[rows, i] = m if price[i, m] >= 0 else cheapest[i]
        rows += 1
    return rows


def seeded_individuals(arrays: GaArrays, population: int) -> np.ndarray:
    """The seeded rows for a population: at most half of it, so at least half starts random."""
    limit = max(1, min(population // 2, 2 + 2 * arrays.n_merchants))
    seeded = np.empty((limit, arrays.n_lines), dtype=np.int32)
    count = seed_population(seeded, arrays.qty, arrays.price, arrays.cand, arrays.params)
    return seeded[:count]
