"""Version 2 carts (a merchant's several nodes, parcel rates by weight) packed for the batch.

Simple carts keep :mod:`gpu_engine.batch.pack`'s arrays and kernels; these are the extra CSR
arrays of the carts that are not simple (C carts, L lines, O eligible offers, K columns, Q
merchants in all):

* ``line_ptr`` int64[C + 1], per line ``line_qty`` and ``line_grams`` (quantity * weight)
  int64[L], ``offer_ptr`` int64[L + 1] (a line's eligible offers in candidate order);
* per offer ``offer_col`` int64[O] (the cart-local column, which is the problem's column
  index: every column of a problem is packed) and ``offer_amount`` int64[O] (quantity * price);
* ``col_ptr`` int64[C + 1]; per column ``col_owner`` (cart-local merchant), ``base``,
  ``extra``, ``tier_count``, ``per_kg`` int64[K] and ``tier_up``/``tier_fee`` int64[K, T]
  (padded to the batch's widest rate table);
* ``owner_ptr`` int64[C + 1]; per merchant its terms ``free_over``, ``dmin``, ``dbp`` int64[Q].

Every cart is solved by the exact full search (:mod:`gpu_engine.batch.v2_ops`); those whose
steps pass the batch's budget are planned TOO_LARGE and the caller uses the per-cart planner.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpu_engine.batch.ops import FULL, MAX_FULL_LINES, TOO_LARGE
from gpu_engine.batch.pack import csr_offsets
from gpu_engine.problem import CartProblem

__all__ = ["PackedV2", "V2Arrays", "pack_v2", "plan_v2"]

# The arrays the kernels read, in their argument order (after the plan's).
V2Arrays = (
    "line_ptr",
    "line_qty",
    "line_grams",
    "offer_ptr",
    "offer_col",
    "offer_amount",
    "col_ptr",
    "col_owner",
    "base",
    "extra",
    "tier_up",
    "tier_fee",
    "tier_count",
    "per_kg",
    "owner_ptr",
    "free_over",
    "dmin",
    "dbp",
)


@dataclass(frozen=True, eq=False)
class PackedV2:
    """Version 2 carts in CSR form (see the module docstring)."""

    line_ptr: np.ndarray
    line_qty: np.ndarray
    line_grams: np.ndarray
    offer_ptr: np.ndarray
    offer_col: np.ndarray
    offer_amount: np.ndarray
    col_ptr: np.ndarray
    col_owner: np.ndarray
    base: np.ndarray
    extra: np.ndarray
    tier_up: np.ndarray
    tier_fee: np.ndarray
    tier_count: np.ndarray
    per_kg: np.ndarray
    owner_ptr: np.ndarray
    free_over: np.ndarray
    dmin: np.ndarray
    dbp: np.ndarray

    @property
    def n_carts(self) -> int:
        return int(self.line_ptr.size - 1)

    @property
    def arrays(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in V2Arrays)


def pack_v2(problems: Sequence[CartProblem]) -> PackedV2:
    """The CSR arrays of ``problems`` (in order, any of them simple or not: a simple cart is
    a version 2 cart with one node a merchant and no tiers)."""
    width = max([1, *(p.fulfillment.tier_up.shape[1] for p in problems)])
    lines: dict[str, list[np.ndarray]] = {"qty": [], "grams": [], "count": []}
    offers: dict[str, list[np.ndarray]] = {"col": [], "amount": []}
    cols: dict[str, list[np.ndarray]] = {
        k: [] for k in ("owner", "base", "extra", "up", "fee", "count", "per_kg")
    }
    owners: dict[str, list[np.ndarray]] = {"free": [], "dmin": [], "dbp": []}
    shapes = np.zeros((len(problems), 3), dtype=np.int64)  # lines, columns, merchants
    for c, p in enumerate(problems):
        f = p.fulfillment
        shapes[c] = (p.n_items, p.n_merchants, f.n_owners)
        qty = p.quantity.astype(np.int64)
        lines["qty"].append(qty)
        lines["grams"].append(qty * f.weight)
        lines["count"].append(p.cand_count)
        # Row-major over (line, rank): each line's eligible offers in candidate order.
        taken = np.arange(p.cand_merchant.shape[1]) < p.cand_count[:, None]
        line_of = np.nonzero(taken)[0]
        col = p.cand_merchant[taken].astype(np.int64)
        offers["col"].append(col)
        offers["amount"].append(qty[line_of] * p.price[line_of, col])
        cols["owner"].append(f.column_owner)
        cols["base"].append(p.base_fee)
        cols["extra"].append(p.per_extra_unit)
        cols["up"].append(_pad(f.tier_up, width))
        cols["fee"].append(_pad(f.tier_fee, width))
        cols["count"].append(f.tier_count)
        cols["per_kg"].append(f.per_kg_over)
        owners["free"].append(f.owner_free_over)
        owners["dmin"].append(f.owner_disc_min_units)
        owners["dbp"].append(f.owner_disc_bp)
    return PackedV2(
        line_ptr=csr_offsets(shapes[:, 0]),
        line_qty=_cat(lines["qty"]),
        line_grams=_cat(lines["grams"]),
        offer_ptr=csr_offsets(_cat(lines["count"])),
        offer_col=_cat(offers["col"]),
        offer_amount=_cat(offers["amount"]),
        col_ptr=csr_offsets(shapes[:, 1]),
        col_owner=_cat(cols["owner"]),
        base=_cat(cols["base"]),
        extra=_cat(cols["extra"]),
        tier_up=_cat(cols["up"], width),
        tier_fee=_cat(cols["fee"], width),
        tier_count=_cat(cols["count"]),
        per_kg=_cat(cols["per_kg"]),
        owner_ptr=csr_offsets(shapes[:, 2]),
        free_over=_cat(owners["free"]),
        dmin=_cat(owners["dmin"]),
        dbp=_cat(owners["dbp"]),
    )


def plan_v2(
    problems: Sequence[CartProblem], *, max_work: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cart (method FULL or TOO_LARGE, assignments, estimated steps): FULL when its
    assignments times lines fit ``max_work`` (v1's full-search estimate) and its lines fit
    the search's digit array."""
    n = len(problems)
    method = np.full(n, TOO_LARGE, dtype=np.int8)
    complexity = np.zeros(n, dtype=np.int64)
    work = np.zeros(n, dtype=np.int64)
    for c, p in enumerate(problems):
        steps = p.complexity * max(p.n_items, 1)  # Python ints: no overflow on huge carts
        if p.n_items <= MAX_FULL_LINES and steps <= max_work:
            method[c] = FULL
            complexity[c] = p.complexity
            work[c] = steps
    return method, complexity, work


def _pad(table: np.ndarray, width: int) -> np.ndarray:
    out = np.zeros((table.shape[0], width), dtype=np.int64)
    out[:, : table.shape[1]] = table
    return out


def _cat(parts: list[np.ndarray], width: int | None = None) -> np.ndarray:
    if not parts:
        shape = (0,) if width is None else (0, width)
        return np.zeros(shape, dtype=np.int64)
    return np.ascontiguousarray(np.concatenate(parts), dtype=np.int64)
