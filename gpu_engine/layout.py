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
        return goods + self.merchants.size * base + extra * units + units


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
    )
