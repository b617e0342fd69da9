"""Version 2 carts (a merchant's several nodes, parcel rates by weight) packed for the batch.

Simple carts keep :mod:`gpu_engine.batch.pack`'s arrays and kernels; these are the extra CSR
arrays of the carts that are not simple (C carts, L lines, O eligible offers, K columns, Q
merchants in all; only the columns an eligible offer names are packed, and their merchants):

* ``line_ptr`` int64[C + 1]; per line ``line_qty``, ``line_grams`` (quantity * weight),
  ``line_radix`` (eligible offers) and ``line_index`` (the line in its problem) int64[L],
  a cart's lines ordered by offers (most last: the search's rows are the last line's
  choices, and longer rows step the odometer less); ``offer_ptr`` int64[L + 1];
* per offer, grouped by line in candidate order, ``offer_col`` (the cart-local column) and
  ``offer_amount`` (quantity * price) int64[O];
* ``col_ptr`` int64[C + 1]; per column ``col_owner`` (the cart-local merchant), ``base``,
  ``extra``, ``tier_count``, ``per_kg`` int64[K] and ``tier_up``/``tier_fee`` int64[K, T]
  (padded to the batch's widest rate table); ``col_index`` int64[K] the column in its problem;
* ``owner_ptr`` int64[C + 1]; per merchant its terms ``free_over``, ``dmin``, ``dbp`` int64[Q].

Every cart is solved by the exact full search (:mod:`gpu_engine.batch.v2_ops`); a cart whose
steps pass the batch's budget, or whose columns or merchants pass the kernel's per-thread
state, is planned TOO_LARGE and the caller uses the per-cart planner.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpu_engine.batch.ops import FULL, MAX_FULL_LINES, TOO_LARGE
from gpu_engine.batch.pack import csr_offsets
from gpu_engine.problem import CartProblem

__all__ = ["MAX_V2_COLUMNS", "MAX_V2_OWNERS", "V2_ARRAYS", "PackedV2", "pack_v2", "plan_v2"]

# A GPU thread's walk state: units, grams and fee per column, four sums per merchant.
MAX_V2_COLUMNS = 48
MAX_V2_OWNERS = 32

# The arrays the search reads, in its argument order.
V2_ARRAYS = (
    "line_ptr",
    "line_qty",
    "line_grams",
    "line_radix",
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
    line_radix: np.ndarray
    line_index: np.ndarray
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
    col_index: np.ndarray
    owner_ptr: np.ndarray
    free_over: np.ndarray
    dmin: np.ndarray
    dbp: np.ndarray

    @property
    def n_carts(self) -> int:
        return int(self.line_ptr.size - 1)

    @property
    def arrays(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in V2_ARRAYS)


def pack_v2(problems: Sequence[CartProblem]) -> PackedV2:
    """The CSR arrays of ``problems`` (in order; a simple cart packs too, as one node a
    merchant without tiers)."""
    width = max([1, *(p.fulfillment.tier_up.shape[1] for p in problems)])
    parts: dict[str, list[np.ndarray]] = {}

    def put(**arrays: np.ndarray) -> None:
        for name, array in arrays.items():
            parts.setdefault(name, []).append(array)

    shapes = np.zeros((len(problems), 3), dtype=np.int64)  # lines, columns, merchants
    for c, p in enumerate(problems):
        f = p.fulfillment
        # Lines by offers, most last: the walk's rows (the last line's choices) are longest.
        order = np.argsort(p.cand_count, kind="stable")
        qty = p.quantity[order].astype(np.int64)
        cand = p.cand_merchant[order]
        count = p.cand_count[order]
        # Row-major over (line, rank): each line's eligible offers in candidate order.
        taken = np.arange(cand.shape[1]) < count[:, None]
        line_of = np.nonzero(taken)[0]
        col = cand[taken].astype(np.int64)
        used = np.unique(col)
        owners = np.unique(f.column_owner[used])
        shapes[c] = (p.n_items, used.size, owners.size)
        put(
            qty=qty,
            grams=qty * f.weight[order],
            radix=count,
            line=order,
            col=np.searchsorted(used, col),
            amount=qty[line_of] * p.price[order[line_of], col],
            owner=np.searchsorted(owners, f.column_owner[used]),
            base=p.base_fee[used],
            extra=p.per_extra_unit[used],
            up=_pad(f.tier_up[used], width),
            fee=_pad(f.tier_fee[used], width),
            count=f.tier_count[used],
            per_kg=f.per_kg_over[used],
            index=used,
            free=f.owner_free_over[owners],
            dmin=f.owner_disc_min_units[owners],
            dbp=f.owner_disc_bp[owners],
        )
    cat = {name: _cat(arrays) for name, arrays in parts.items()}
    empty = np.zeros(0, dtype=np.int64)
    empty_tiers = np.zeros((0, width), dtype=np.int64)
    radix = cat.get("radix", empty)
    return PackedV2(
        line_ptr=csr_offsets(shapes[:, 0]),
        line_qty=cat.get("qty", empty),
        line_grams=cat.get("grams", empty),
        line_radix=radix,
        line_index=cat.get("line", empty),
        offer_ptr=csr_offsets(radix),
        offer_col=cat.get("col", empty),
        offer_amount=cat.get("amount", empty),
        col_ptr=csr_offsets(shapes[:, 1]),
        col_owner=cat.get("owner", empty),
        base=cat.get("base", empty),
        extra=cat.get("extra", empty),
        tier_up=cat.get("up", empty_tiers),
        tier_fee=cat.get("fee", empty_tiers),
        tier_count=cat.get("count", empty),
        per_kg=cat.get("per_kg", empty),
        col_index=cat.get("index", empty),
        owner_ptr=csr_offsets(shapes[:, 2]),
        free_over=cat.get("free", empty),
        dmin=cat.get("dmin", empty),
        dbp=cat.get("dbp", empty),
    )


def plan_v2(
    problems: Sequence[CartProblem], packed: PackedV2, *, max_work: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cart (method FULL or TOO_LARGE, assignments, estimated steps): FULL when its
    assignments times lines fit ``max_work`` (version 1's estimate: the walk prices an
    assignment in one parcel and one merchant, as v1's in one merchant), its lines the
    search's digit array and its columns and merchants a GPU thread's state."""
    n = len(problems)
    method = np.full(n, TOO_LARGE, dtype=np.int8)
    complexity = np.zeros(n, dtype=np.int64)
    work = np.zeros(n, dtype=np.int64)
    n_cols = np.diff(packed.col_ptr)
    n_owners = np.diff(packed.owner_ptr)
    for c, p in enumerate(problems):
        steps = p.complexity * max(p.n_items, 1)  # Python ints: no overflow on huge carts
        if (
            1 <= p.n_items <= MAX_FULL_LINES
            and steps <= max_work
            and n_cols[c] <= MAX_V2_COLUMNS
            and n_owners[c] <= MAX_V2_OWNERS
        ):
            method[c] = FULL
            complexity[c] = p.complexity
            work[c] = steps
    return method, complexity, work


def _pad(table: np.ndarray, width: int) -> np.ndarray:
    out = np.zeros((table.shape[0], width), dtype=np.int64)
    out[:, : table.shape[1]] = table
    return out


def _cat(parts: list[np.ndarray]) -> np.ndarray:
    return np.ascontiguousarray(np.concatenate(parts), dtype=np.int64)
