"""The dense arrays a :class:`~gpu_engine.problem.CartProblem` compiles to: which offers are
eligible, each line's candidates in price order, read-only copies.

Pure NumPy on arrays already validated by :mod:`gpu_engine.problem`, which names any refusal.
"""

from __future__ import annotations

import numpy as np

NO_OFFER = -1
UNLIMITED_STOCK = -1


def eligibility(
    grid_price: np.ndarray, grid_stock: np.ndarray, qty: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(eligible, price) over (line, merchant): an offer is eligible when its stock covers the
    line's quantity; ``price`` keeps the unit price of eligible offers only, else ``NO_OFFER``."""
    has_offer = grid_price != NO_OFFER
    eligible = has_offer & ((grid_stock == UNLIMITED_STOCK) | (grid_stock >= qty[:, None]))
    return eligible, np.where(eligible, grid_price, NO_OFFER)


def candidate_order(eligible: np.ndarray, price: np.ndarray, width: int) -> np.ndarray:
    """Each line's eligible merchants by ascending unit price (ties by merchant index), padded
    with -1 to ``width``."""
    cand = np.full((eligible.shape[0], width), -1, dtype=np.int32)
    for i in range(eligible.shape[0]):
        idx = np.flatnonzero(eligible[i])
        order = np.argsort(price[i, idx], kind="stable")
        cand[i, : idx.size] = idx[order]
    return cand


def readonly(array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array)
    array.setflags(write=False)
    return array
