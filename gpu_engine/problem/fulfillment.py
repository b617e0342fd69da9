"""Who ships a column: the merchant that owns each fulfillment node, the node's parcel rate by
weight, and each line's weight (spec version 2).

Solvers assign lines to *columns* (a merchant's node). A problem is *simple* when every merchant
has one node and no node has weight tiers: its columns are its merchants and it is priced by
version 1's formula exactly, so every route takes it. Otherwise only the routes that price
parcels take it (:func:`require_simple`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpu_engine.dense import readonly
from gpu_engine.problem.errors import FulfillmentUnsupported, ProblemError


@dataclass(frozen=True, eq=False)
class Fulfillment:
    """Read-only arrays: ``column_owner`` int64[C] (merchant index of each column);
    ``weight`` int64[N] (grams per unit of each line); ``tier_up``/``tier_fee`` int64[C, T]
    (``T`` >= 1, padded), ``tier_count`` int64[C] (0: no tiers), ``per_kg_over`` int64[C];
    ``owner_free_over`` (-1: never free), ``owner_disc_min_units`` (0: no discount),
    ``owner_disc_bp`` int64[M]. ``node_ids`` names each column's node within its merchant."""

    owner_ids: tuple[str, ...]
    node_ids: tuple[str, ...]
    column_owner: np.ndarray
    weight: np.ndarray
    tier_up: np.ndarray
    tier_fee: np.ndarray
    tier_count: np.ndarray
    per_kg_over: np.ndarray
    owner_free_over: np.ndarray
    owner_disc_min_units: np.ndarray
    owner_disc_bp: np.ndarray

    @property
    def n_owners(self) -> int:
        return len(self.owner_ids)

    @property
    def simple(self) -> bool:
        """One node per merchant and no weight tiers: version 1's pricing holds exactly."""
        return self.n_owners == len(self.node_ids) and not self.tier_count.any()

    @property
    def owner_params(self) -> tuple[np.ndarray, ...]:
        return (self.owner_free_over, self.owner_disc_min_units, self.owner_disc_bp)

    @property
    def parcel_params(self) -> tuple[np.ndarray, ...]:
        """Per-column tier arrays in the argument order of the njit parcel pricing."""
        return (self.tier_up, self.tier_fee, self.tier_count, self.per_kg_over)

    def column_of(self) -> dict[tuple[str, str], int]:
        """(merchant id, node id) -> column index."""
        return {
            (self.owner_ids[int(o)], node): c
            for c, (o, node) in enumerate(zip(self.column_owner, self.node_ids, strict=True))
        }

    def tiers_of(self, column: int) -> list[tuple[int, int]]:
        count = int(self.tier_count[column])
        return [(int(self.tier_up[column, t]), int(self.tier_fee[column, t])) for t in range(count)]


def build_fulfillment(
    *,
    owner_ids: tuple[str, ...],
    node_ids: tuple[str, ...],
    column_owner: np.ndarray,
    weight: np.ndarray,
    tiers: list[list[tuple[int, int]]],
    per_kg_over: np.ndarray,
    owner_free_over: np.ndarray,
    owner_disc_min_units: np.ndarray,
    owner_disc_bp: np.ndarray,
) -> Fulfillment:
    """Validated arrays (the caller checked signs and lengths of the owner and line columns)."""
    n_columns = len(node_ids)
    _check_columns(owner_ids, node_ids, column_owner)
    width = max([1, *(len(t) for t in tiers)])
    tier_up = np.zeros((n_columns, width), dtype=np.int64)
    tier_fee = np.zeros((n_columns, width), dtype=np.int64)
    tier_count = np.zeros(n_columns, dtype=np.int64)
    for c, column_tiers in enumerate(tiers):
        _check_tiers(c, column_tiers)
        tier_count[c] = len(column_tiers)
        for t, (up_to, fee) in enumerate(column_tiers):
            tier_up[c, t] = up_to
            tier_fee[c, t] = fee
    bad = np.flatnonzero(per_kg_over < 0)
    if bad.size:
        raise ProblemError(f"per_kg_over[{bad[0]}]", int(per_kg_over[bad[0]]), "must be >= 0")
    bad = np.flatnonzero(weight < 0)
    if bad.size:
        raise ProblemError(f"weights[{bad[0]}]", int(weight[bad[0]]), "must be >= 0")
    return Fulfillment(
        owner_ids=owner_ids,
        node_ids=node_ids,
        column_owner=readonly(column_owner.astype(np.int64)),
        weight=readonly(weight.astype(np.int64)),
        tier_up=readonly(tier_up),
        tier_fee=readonly(tier_fee),
        tier_count=readonly(tier_count),
        per_kg_over=readonly(per_kg_over.astype(np.int64)),
        owner_free_over=readonly(owner_free_over.astype(np.int64)),
        owner_disc_min_units=readonly(owner_disc_min_units.astype(np.int64)),
        owner_disc_bp=readonly(owner_disc_bp.astype(np.int64)),
    )


def _check_columns(
    owner_ids: tuple[str, ...], node_ids: tuple[str, ...], column_owner: np.ndarray
) -> None:
    if column_owner.shape != (len(node_ids),):
        raise ProblemError("column_owner", column_owner.shape, "must have one owner a column")
    bad = np.flatnonzero((column_owner < 0) | (column_owner >= len(owner_ids)))
    if bad.size:
        c = int(bad[0])
        raise ProblemError(f"column_owner[{c}]", int(column_owner[c]), "is not a merchant index")
    # Columns are grouped by owner, in owner order: the answer lists parcels in that order, and
    # every owner has a node.
    if column_owner.size and (np.any(np.diff(column_owner) < 0)):
        raise ProblemError("column_owner", column_owner.tolist(), "must be sorted by merchant")
    missing = sorted(set(range(len(owner_ids))) - set(column_owner.tolist()))
    if missing:
        m = missing[0]
        raise ProblemError(f"merchants[{m}].nodes", [], "a merchant needs at least one node")
    seen: set[tuple[int, str]] = set()
    for c, node_id in enumerate(node_ids):
        if not isinstance(node_id, str) or not node_id:
            raise ProblemError(f"node_ids[{c}]", node_id, "must be a non-empty string")
        key = (int(column_owner[c]), node_id)
        if key in seen:
            raise ProblemError(f"node_ids[{c}]", node_id, "duplicate node id for this merchant")
        seen.add(key)


def _check_tiers(column: int, tiers: list[tuple[int, int]]) -> None:
    previous = -1
    for t, (up_to, fee) in enumerate(tiers):
        path = f"columns[{column}].weight_tiers[{t}]"
        if up_to < 0 or fee < 0:
            raise ProblemError(path, (up_to, fee), "up_to_g and fee must be >= 0")
        if up_to <= previous:
            raise ProblemError(f"{path}.up_to_g", up_to, "tiers must have increasing up_to_g")
        previous = up_to


def single_node(
    owner_ids: tuple[str, ...], n_items: int, params: dict[str, np.ndarray]
) -> Fulfillment:
    """A version 1 problem's fulfillment: one node per merchant, named as the merchant."""
    n = len(owner_ids)
    return build_fulfillment(
        owner_ids=owner_ids,
        node_ids=owner_ids,
        column_owner=np.arange(n, dtype=np.int64),
        weight=np.zeros(n_items, dtype=np.int64),
        tiers=[[] for _ in range(n)],
        per_kg_over=np.zeros(n, dtype=np.int64),
        owner_free_over=params["free_over"],
        owner_disc_min_units=params["disc_min_units"],
        owner_disc_bp=params["disc_bp"],
    )


def require_simple(problem_fulfillment: Fulfillment, algorithm: str) -> None:
    """Refuse a version 2 cart for an algorithm that prices version 1 carts only."""
    if not problem_fulfillment.simple:
        raise FulfillmentUnsupported(
            "algorithm",
            algorithm,
            "does not price several warehouses per merchant or weight tiers; use auto or "
            "cpu-full, gpu-full, dp, cpu-dp, gpu-dp, milp, cpu-ga, gpu-ga",
        )
