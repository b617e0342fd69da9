"""Host-side layout of a full search: the mixed-radix numbering of assignments.

Shared by the CPU and GPU full searches so both number assignments identically. Lines with a
single eligible offer are folded into a starting per-merchant state (they do not multiply the
search), merchants no line can use are dropped, and the free lines are ordered by ascending
offer count so the innermost (fastest) digit has the most choices: the inner loop prices its
choices in O(1) each, and the costlier odometer carries happen least often.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpu_engine.problem import INT64_MAX, CapacityError, CartProblem


class ComplexityError(CapacityError):
    """The cart has more assignments than a full search can number (int64)."""


@dataclass(frozen=True, eq=False)
class FullSearchLayout:
    """Assignment ``index`` = sum(digit[l] * stride[l]); digit[l] picks ``cand[l, digit]``.

    ``lines``: original line index of each free line (outermost first). ``radix`` int64[L];
    ``cand`` int32[L, W] compact merchant per digit; ``amount`` int64[L, W] = quantity * price;
    ``qty`` int64[L]; ``merchants``: original index of each compact merchant; ``params``: the
    five merchant arrays, compacted; ``sub0``/``units0``: the state of the folded lines.
    """

    problem: CartProblem
    lines: np.ndarray
    radix: np.ndarray
    cand: np.ndarray
    amount: np.ndarray
    qty: np.ndarray
    merchants: np.ndarray
    params: tuple[np.ndarray, ...]
    sub0: np.ndarray
    units0: np.ndarray
    fixed_choice: np.ndarray
    complexity: int
    parcels: ParcelLayout | None = None

    @property
    def n_free(self) -> int:
        return int(self.radix.size)

    def decode(self, index: int) -> np.ndarray:
        """Merchant index (original numbering) per line of the problem for ``index``."""
        choice = self.fixed_choice.copy()
        for k in range(self.n_free - 1, -1, -1):
            radix = int(self.radix[k])
            digit = index % radix
            index //= radix
            choice[self.lines[k]] = self.merchants[self.cand[k, digit]]
        return choice

    def flat(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The choices packed line after line, as both full searches walk them
        (:mod:`gpu_engine.solvers.full.ops`): ``off`` int32[L + 1] (line k's choices are entries
        ``off[k] .. off[k + 1] - 1``), ``cand`` int32[F] compact merchant, ``amount`` int64[F]."""
        off = np.zeros(self.n_free + 1, dtype=np.int32)
        off[1:] = np.cumsum(self.radix)
        rows = range(self.n_free)
        cand = np.concatenate([self.cand[k, : self.radix[k]] for k in rows] or [np.zeros(0)])
        amount = np.concatenate([self.amount[k, : self.radix[k]] for k in rows] or [np.zeros(0)])
        return off, cand.astype(np.int32), amount.astype(np.int64)

    def max_money(self) -> int:
        """An upper bound on any merchant subtotal and any total this search can form."""
        goods = int(self.sub0.sum()) + int(self.amount.max(axis=1, initial=0).sum())
        units = int(self.units0.sum()) + int(self.qty.sum())
        base, extra = (int(p.max(initial=0)) for p in self.params[:2])
        money = goods + self.merchants.size * base + extra * units + units
        if self.parcels is not None:
            money += self.merchants.size * self.parcels.max_weight_fee()
            # A parcel's weight is state too: it must fit wherever the money must.
            money = max(money, self.parcels.max_grams())
        return money


@dataclass(frozen=True, eq=False)
class ParcelLayout:
    """Version 2 pricing of a :class:`FullSearchLayout`'s compact columns.

    ``grams`` int64[L]: quantity * weight of each free line; ``grams0`` int64[C]: the folded
    lines' weight per column; ``owner`` int32[C]: compact merchant of each column; ``tiers``:
    ``tier_up``, ``tier_fee`` int64[C, T], ``tier_count``, ``per_kg_over`` int64[C];
    ``terms``: ``free_over``, ``disc_min_units``, ``disc_bp`` int64[O] of the compact merchants
    (``owners``: their original index)."""

    grams: np.ndarray
    grams0: np.ndarray
    owner: np.ndarray
    owners: np.ndarray
    tiers: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    terms: tuple[np.ndarray, np.ndarray, np.ndarray]

    @property
    def n_owners(self) -> int:
        return int(self.owners.size)

    def max_grams(self) -> int:
        return int(self.grams0.sum()) + int(self.grams.sum())

    def max_weight_fee(self) -> int:
        """The dearest weight fee a parcel of this cart could cost (Python ints)."""
        tier_up, tier_fee, tier_count, per_kg = self.tiers
        grams = self.max_grams()
        dearest = 0
        for c in np.flatnonzero(tier_count):
            last = int(tier_up[c, int(tier_count[c]) - 1])
            kilos = -(-max(0, grams - last) // 1000)
            fee = int(tier_fee[c, : int(tier_count[c])].max()) + int(per_kg[c]) * kilos
            dearest = max(dearest, fee)
        return dearest


def full_search_layout(problem: CartProblem) -> FullSearchLayout:
    if problem.complexity > INT64_MAX:
        raise ComplexityError(
            "complexity",
            problem.complexity,
            "too many assignments for a full search (more than int64 can number)",
        )
    counts = problem.cand_count.astype(np.int64)
    free = np.flatnonzero(counts > 1)
    free = free[np.argsort(counts[free], kind="stable")]
    used = np.unique(problem.cand_merchant[problem.cand_merchant >= 0])
    compact = np.full(problem.n_merchants, -1, dtype=np.int32)
    compact[used] = np.arange(used.size, dtype=np.int32)

    fixed_choice = problem.cand_merchant[:, 0].astype(np.int64)
    sub0 = np.zeros(used.size, dtype=np.int64)
    units0 = np.zeros(used.size, dtype=np.int64)
    for i in np.flatnonzero(counts == 1):
        m = fixed_choice[i]
        sub0[compact[m]] += problem.quantity[i] * problem.price[i, m]
        units0[compact[m]] += problem.quantity[i]

    width = max(int(counts[free].max(initial=1)), 1)
    cand = np.zeros((free.size, width), dtype=np.int32)
    amount = np.zeros((free.size, width), dtype=np.int64)
    for k, i in enumerate(free):
        merchants = problem.cand_merchant[i, : counts[i]]
        cand[k, : merchants.size] = compact[merchants]
        amount[k, : merchants.size] = problem.quantity[i] * problem.price[i, merchants]
    parcels = None if problem.simple else _parcel_layout(problem, used, free, counts)
    return FullSearchLayout(
        problem=problem,
        lines=free,
        radix=counts[free].copy(),
        cand=cand,
        amount=amount,
        qty=problem.quantity[free].copy(),
        merchants=used.astype(np.int64),
        params=tuple(np.ascontiguousarray(p[used]) for p in problem.merchant_params),
        sub0=sub0,
        units0=units0,
        fixed_choice=fixed_choice,
        complexity=problem.complexity,
        parcels=parcels,
    )


def _parcel_layout(
    problem: CartProblem, used: np.ndarray, free: np.ndarray, counts: np.ndarray
) -> ParcelLayout:
    f = problem.fulfillment
    line_grams = problem.quantity * f.weight
    compact = np.full(problem.n_merchants, -1, dtype=np.int64)
    compact[used] = np.arange(used.size)
    grams0 = np.zeros(used.size, dtype=np.int64)
    for i in np.flatnonzero(counts == 1):
        grams0[compact[problem.cand_merchant[i, 0]]] += line_grams[i]
    owners, owner = np.unique(f.column_owner[used], return_inverse=True)
    return ParcelLayout(
        grams=line_grams[free].astype(np.int64),
        grams0=grams0,
        owner=owner.astype(np.int32),
        owners=owners.astype(np.int64),
        tiers=tuple(np.ascontiguousarray(a[used]) for a in f.parcel_params),  # type: ignore[arg-type]
        terms=tuple(np.ascontiguousarray(a[owners]) for a in f.owner_params),  # type: ignore[arg-type]
    )
