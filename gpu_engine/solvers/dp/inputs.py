"""The merchant DP's inputs on the host, shared by its CPU and CUDA runs: the free lines, the
merchants that take part, and the expansion of a DP answer back to a choice per line."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpu_engine.problem import CartProblem
from gpu_engine.solvers.dp.cpu import dp_inputs


@dataclass(frozen=True, eq=False)
class MerchantDPInputs:
    """The merchant DP over the free lines (>= 2 eligible offers); lines with one offer are
    folded into their merchant's starting subtotal/units (``sub0``/``units0``)."""

    free: np.ndarray
    merchants: np.ndarray
    mask: np.ndarray
    n_lines: np.ndarray
    lines: np.ndarray
    amount: np.ndarray
    units: np.ndarray
    sub0: np.ndarray
    units0: np.ndarray
    params: tuple[np.ndarray, ...]

    @property
    def k(self) -> int:
        return int(self.free.size)

    def steps(self) -> int:
        k = self.k
        return sum(2 ** (k - int(a)) * 3 ** int(a) for a in self.n_lines)

    def pick_dtype(self) -> np.dtype:
        return np.dtype(np.uint16) if int(self.n_lines.max(initial=0)) <= 16 else np.dtype(np.int32)

    def memory_bytes(self) -> int:
        size = 1 << self.k
        return size * 8 * 2 + self.merchants.size * size * self.pick_dtype().itemsize


def merchant_dp_inputs(problem: CartProblem) -> MerchantDPInputs:
    counts = problem.cand_count
    free = np.flatnonzero(counts > 1).astype(np.int64)
    forced = np.flatnonzero(counts == 1)
    sub0 = np.zeros(problem.n_merchants, dtype=np.int64)
    units0 = np.zeros(problem.n_merchants, dtype=np.int64)
    for i in forced:
        m = problem.cand_merchant[i, 0]
        sub0[m] += problem.quantity[i] * problem.price[i, m]
        units0[m] += problem.quantity[i]
    mask, n_lines, lines, amount, units = dp_inputs(problem.quantity, problem.price, free)
    # Merchants that serve no free line and no forced line play no part.
    active = np.flatnonzero((n_lines > 0) | (units0 > 0))
    return MerchantDPInputs(
        free=free,
        merchants=active,
        mask=mask[active],
        n_lines=n_lines[active],
        lines=lines[active],
        amount=amount[active],
        units=units[active],
        sub0=sub0[active],
        units0=units0[active],
        params=tuple(np.ascontiguousarray(p[active]) for p in problem.merchant_params),
    )


def expand_choice(
    problem: CartProblem, inputs: MerchantDPInputs, free_choice: np.ndarray
) -> np.ndarray:
    """Merchant index per line of the problem from the DP's active-merchant index per free
    line; forced lines take their only merchant."""
    choice = problem.cand_merchant[:, 0].astype(np.int64)
    choice[inputs.free] = inputs.merchants[np.asarray(free_choice, dtype=np.int64)]
    return choice
