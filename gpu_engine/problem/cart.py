"""The :class:`CartProblem`: columns (a merchant's fulfillment nodes), dense compilation.

A :class:`CartProblem` is built once (from the spec's JSON, or from arrays the storefront
already holds) and compiled into dense int64 NumPy arrays that every solver reuses, CPU or GPU
(:mod:`gpu_engine.dense`). Validation refuses bad input with a :class:`ProblemError` naming the
field and the value.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpu_engine.dense import NO_OFFER, UNLIMITED_STOCK, candidate_order, eligibility, readonly
from gpu_engine.problem.errors import ProblemError
from gpu_engine.problem.fulfillment import Fulfillment, build_fulfillment, single_node
from gpu_engine.problem.json_input import (
    INT64_MAX,
    ParsedColumns,
    parse_int,
    parse_problem,
)

# Totals must fit int64 with headroom: solvers add a few partial totals before comparing, and the
# DP solvers use 2**62 as "infeasible".
MONEY_LIMIT = 2**62


# --- array-level validation and compilation --------------------------------------------------


def _int_array(name: str, values: Any, length: int | None = None) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1:
        raise ProblemError(name, array.shape, "must be a one-dimensional array")
    if array.size and array.dtype.kind not in "iu":
        raise ProblemError(name, str(array.dtype), "must hold integers")
    if length is not None and array.size != length:
        raise ProblemError(name, array.size, f"must have length {length}")
    if array.dtype.kind == "u" and array.size and int(array.max()) > INT64_MAX:
        raise ProblemError(name, int(array.max()), "does not fit int64")
    return array.astype(np.int64)


def _check_min(name: str, array: np.ndarray, minimum: int) -> None:
    bad = np.flatnonzero(array < minimum)
    if bad.size:
        i = int(bad[0])
        raise ProblemError(f"{name}[{i}]", int(array[i]), f"must be >= {minimum}")


def _check_ids(name: str, ids: Sequence[Any]) -> tuple[str, ...]:
    seen: set[str] = set()
    for i, value in enumerate(ids):
        if not isinstance(value, str) or not value:
            raise ProblemError(f"{name}[{i}]", value, "must be a non-empty string")
        if value in seen:
            raise ProblemError(f"{name}[{i}]", value, f"duplicate {name[:-1]}")
        seen.add(value)
    return tuple(ids)


@dataclass(frozen=True, eq=False)
class CartProblem:
    """An immutable, validated cart problem compiled to dense arrays.

    Solvers assign each line to a *column*: one fulfillment node of one merchant. In a version 1
    problem (and any problem whose :attr:`fulfillment` is ``simple``) the columns are the
    merchants, and ``merchant_ids`` are the merchants' ids; otherwise ``merchant_ids`` label the
    columns and :attr:`fulfillment` says which merchant owns each.

    Arrays (all read-only): ``quantity`` int64[n_items]; ``price`` int64[n_items, n_merchants],
    the unit price of the line's *eligible* offer at each column or -1; ``base_fee``,
    ``per_extra_unit`` (the column's parcel rate), ``free_over`` (-1 = never free),
    ``disc_min_units`` (0 = no discount), ``disc_bp`` (the owning merchant's terms)
    int64[n_merchants]; ``cand_merchant`` int32[n_items, max_cands], each line's eligible
    columns by ascending unit price (ties by column index), padded with -1; ``cand_count``
    int32[n_items]. ``offer_price``/``offer_stock`` keep every offer, eligible or not, so that
    :meth:`to_dict` round-trips.
    """

    item_ids: tuple[str, ...]
    merchant_ids: tuple[str, ...]
    quantity: np.ndarray
    price: np.ndarray
    base_fee: np.ndarray
    per_extra_unit: np.ndarray
    free_over: np.ndarray
    disc_min_units: np.ndarray
    disc_bp: np.ndarray
    cand_merchant: np.ndarray
    cand_count: np.ndarray
    offer_price: np.ndarray
    offer_stock: np.ndarray
    complexity: int
    fulfillment: Fulfillment

    @property
    def n_items(self) -> int:
        return len(self.item_ids)

    @property
    def n_merchants(self) -> int:
        """The number of columns (merchants, in a simple problem)."""
        return len(self.merchant_ids)

    @property
    def simple(self) -> bool:
        """Priced by version 1's formula: one node per merchant and no weight tiers."""
        return self.fulfillment.simple

    @property
    def merchant_params(self) -> tuple[np.ndarray, ...]:
        """The per-column arrays in the argument order of the njit pricing routines."""
        return (
            self.base_fee,
            self.per_extra_unit,
            self.free_over,
            self.disc_min_units,
            self.disc_bp,
        )

    # --- constructors ---

    @classmethod
    def from_json(cls, text: str | bytes) -> CartProblem:
        """The problem of a JSON text (UTF-8 bytes or str; a leading byte-order mark is
        allowed). Integers too long for any field are kept as :class:`HugeInteger`, so that
        the field that holds one is named in the refusal."""
        if isinstance(text, bytes | bytearray):
            try:
                text = bytes(text).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ProblemError("$", f"byte {exc.start}", "is not valid UTF-8") from None
        try:
            data = json.loads(text.removeprefix("\ufeff"), parse_int=parse_int)
        except json.JSONDecodeError as exc:
            raise ProblemError("$", str(exc), "is not valid JSON") from None
        except RecursionError:
            # A cart is a few levels deep; CPython's decoder recurses per level.
            raise ProblemError("$", "deeply nested JSON", "is nested too deeply") from None
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CartProblem:
        """The problem of the spec's JSON object, version 1 and version 2 merchants alike."""
        return cls._from_parsed(parse_problem(data))

    @classmethod
    def _from_parsed(cls, p: ParsedColumns) -> CartProblem:
        return cls.from_columns(
            item_ids=p.item_ids,
            quantities=p.quantities,
            weights=p.weights,
            merchant_ids=p.owner_ids,
            free_over=p.free_over,
            disc_min_units=p.disc_min_units,
            disc_bp=p.disc_bp,
            column_merchant=p.column_owner,
            node_ids=p.node_ids,
            base_fee=p.base_fee,
            per_extra_unit=p.per_extra_unit,
            weight_tiers=p.tiers,
            per_kg_over=p.per_kg_over,
            offer_item=p.offer_item,
            offer_column=p.offer_column,
            offer_price=p.offer_price,
            offer_stock=p.offer_stock,
        )

    @classmethod
    def from_arrays(
        cls,
        *,
        item_ids: Sequence[str],
        quantities: Sequence[int] | np.ndarray,
        merchant_ids: Sequence[str],
        base_fee: Sequence[int] | np.ndarray,
        per_extra_unit: Sequence[int] | np.ndarray,
        free_over: Sequence[int] | np.ndarray,
        disc_min_units: Sequence[int] | np.ndarray,
        disc_bp: Sequence[int] | np.ndarray,
        offer_item: Sequence[int] | np.ndarray,
        offer_merchant: Sequence[int] | np.ndarray,
        offer_price: Sequence[int] | np.ndarray,
        offer_stock: Sequence[int] | np.ndarray,
    ) -> CartProblem:
        """Build a version 1 problem from columns. ``free_over`` -1 = never free;
        ``disc_min_units`` 0 = no discount; offers are parallel arrays of (item index, merchant
        index, unit price, stock) with stock -1 = unlimited."""
        items = _check_ids("items", list(item_ids))
        merchants = _check_ids("merchants", list(merchant_ids))
        if not items:
            raise ProblemError("items", [], "the cart is empty")
        n, m = len(items), len(merchants)
        qty = _int_array("quantities", quantities, n)
        _check_min("quantities", qty, 1)
        mcols = _column_params(
            m, base_fee, per_extra_unit, free_over, disc_min_units, disc_bp, owner=None
        )
        grid_price, grid_stock = _offer_grid(
            n, m, offer_item, offer_merchant, offer_price, offer_stock, items, merchants
        )
        fulfillment = single_node(merchants, n, mcols)
        return cls._compile(items, merchants, qty, mcols, grid_price, grid_stock, fulfillment)

    @classmethod
    def from_columns(
        cls,
        *,
        item_ids: Sequence[str],
        quantities: Sequence[int] | np.ndarray,
        weights: Sequence[int] | np.ndarray,
        merchant_ids: Sequence[str],
        free_over: Sequence[int] | np.ndarray,
        disc_min_units: Sequence[int] | np.ndarray,
        disc_bp: Sequence[int] | np.ndarray,
        column_merchant: Sequence[int] | np.ndarray,
        node_ids: Sequence[str],
        base_fee: Sequence[int] | np.ndarray,
        per_extra_unit: Sequence[int] | np.ndarray,
        weight_tiers: Sequence[Sequence[tuple[int, int]]],
        per_kg_over: Sequence[int] | np.ndarray,
        offer_item: Sequence[int] | np.ndarray,
        offer_column: Sequence[int] | np.ndarray,
        offer_price: Sequence[int] | np.ndarray,
        offer_stock: Sequence[int] | np.ndarray,
    ) -> CartProblem:
        """Build a version 2 problem: merchants (``free_over``, discount) own columns (their
        fulfillment nodes, grouped by merchant in merchant order) with a parcel rate each
        (``base_fee``, ``per_extra_unit``, ``weight_tiers`` as (up_to_g, fee) pairs,
        ``per_kg_over``); ``weights`` are grams per unit of each line; offers are parallel
        arrays of (item index, column index, unit price, stock -1 = unlimited)."""
        items = _check_ids("items", list(item_ids))
        owners = _check_ids("merchants", list(merchant_ids))
        if not items:
            raise ProblemError("items", [], "the cart is empty")
        n, n_owners = len(items), len(owners)
        qty = _int_array("quantities", quantities, n)
        _check_min("quantities", qty, 1)
        owner_cols = _column_params(
            n_owners,
            [0] * n_owners,
            [0] * n_owners,
            free_over,
            disc_min_units,
            disc_bp,
            owner=None,
        )
        owner_of = _int_array("column_merchant", column_merchant)
        n_cols = owner_of.size
        fulfillment = build_fulfillment(
            owner_ids=owners,
            node_ids=tuple(node_ids),
            column_owner=owner_of,
            weight=_int_array("weights", weights, n),
            tiers=[list(t) for t in weight_tiers] if len(weight_tiers) == n_cols else [],
            per_kg_over=_int_array("per_kg_over", per_kg_over, n_cols),
            owner_free_over=owner_cols["free_over"],
            owner_disc_min_units=owner_cols["disc_min_units"],
            owner_disc_bp=owner_cols["disc_bp"],
        )
        if len(weight_tiers) != n_cols:
            raise ProblemError("weight_tiers", len(weight_tiers), f"must have length {n_cols}")
        mcols = _column_params(
            n_cols, base_fee, per_extra_unit, free_over, disc_min_units, disc_bp, owner=owner_of
        )
        labels = column_labels(owners, fulfillment)
        grid_price, grid_stock = _offer_grid(
            n, n_cols, offer_item, offer_column, offer_price, offer_stock, items, labels
        )
        return cls._compile(items, labels, qty, mcols, grid_price, grid_stock, fulfillment)

    @classmethod
    def _compile(
        cls,
        items: tuple[str, ...],
        columns: tuple[str, ...],
        qty: np.ndarray,
        mcols: dict[str, np.ndarray],
        grid_price: np.ndarray,
        grid_stock: np.ndarray,
        fulfillment: Fulfillment,
    ) -> CartProblem:
        eligible, price = eligibility(grid_price, grid_stock, qty)
        counts = eligible.sum(axis=1)
        missing = [items[i] for i in np.flatnonzero(counts == 0)]
        if missing:
            raise ProblemError("items", missing, "no eligible offer (price and stock) for lines")
        _check_money_bounds(qty, price, mcols, fulfillment)
        cand = candidate_order(eligible, price, int(counts.max()))
        return cls(
            item_ids=items,
            merchant_ids=columns,
            quantity=readonly(qty),
            price=readonly(price),
            cand_merchant=readonly(cand),
            cand_count=readonly(counts.astype(np.int32)),
            offer_price=readonly(grid_price),
            offer_stock=readonly(grid_stock),
            complexity=math.prod(int(c) for c in counts),
            fulfillment=fulfillment,
            **{name: readonly(arr) for name, arr in mcols.items()},
        )

    # --- serialisation ---

    def to_dict(self) -> dict[str, Any]:
        """The spec's JSON object: version 1 where the problem is one (single nodes named as
        their merchants, no weights), so a version 1 input round-trips as it came."""
        if self._written_v1():
            return {
                "items": [
                    {"id": item_id, "quantity": int(q)}
                    for item_id, q in zip(self.item_ids, self.quantity, strict=True)
                ],
                "merchants": [self._merchant_dict_v1(j) for j in range(self.n_merchants)],
                "offers": self._offers_dict(node=False),
            }
        return to_dict_v2(self)

    def _written_v1(self) -> bool:
        f = self.fulfillment
        return f.simple and f.node_ids == f.owner_ids and not f.weight.any()

    def _offers_dict(self, *, node: bool) -> list[dict[str, Any]]:
        f = self.fulfillment
        offers = []
        for i, j in zip(*np.nonzero(self.offer_price != NO_OFFER), strict=True):
            stock = int(self.offer_stock[i, j])
            offer: dict[str, Any] = {
                "item": self.item_ids[i],
                "merchant": f.owner_ids[int(f.column_owner[j])],
            }
            if node:
                offer["node"] = f.node_ids[j]
            offer["price"] = int(self.offer_price[i, j])
            offer["stock"] = None if stock == UNLIMITED_STOCK else stock
            offers.append(offer)
        return offers

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    def _merchant_dict_v1(self, j: int) -> dict[str, Any]:
        free_over = int(self.free_over[j])
        return {
            "id": self.merchant_ids[j],
            "shipping": {
                "base_fee": int(self.base_fee[j]),
                "per_extra_unit": int(self.per_extra_unit[j]),
                "free_over": None if free_over < 0 else free_over,
            },
            "discount": _discount_dict(int(self.disc_min_units[j]), int(self.disc_bp[j])),
        }

    def __repr__(self) -> str:
        return (
            f"CartProblem(n_items={self.n_items}, n_merchants={self.n_merchants}, "
            f"complexity={self.complexity})"
        )


def _discount_dict(min_units: int, bp: int) -> dict[str, int] | None:
    return None if min_units == 0 else {"min_units": min_units, "basis_points": bp}


def to_dict_v2(problem: CartProblem) -> dict[str, Any]:
    f = problem.fulfillment
    items = [
        {"id": item_id, "quantity": int(q), "weight_g": int(w)}
        for item_id, q, w in zip(problem.item_ids, problem.quantity, f.weight, strict=True)
    ]
    merchants = []
    for o, owner_id in enumerate(f.owner_ids):
        free_over = int(f.owner_free_over[o])
        nodes = []
        for c in np.flatnonzero(f.column_owner == o):
            shipping: dict[str, Any] = {
                "base_fee": int(problem.base_fee[c]),
                "per_extra_unit": int(problem.per_extra_unit[c]),
            }
            if f.tier_count[c]:
                shipping["weight_tiers"] = [
                    {"up_to_g": up, "fee": fee} for up, fee in f.tiers_of(int(c))
                ]
                shipping["per_kg_over"] = int(f.per_kg_over[c])
            nodes.append({"id": f.node_ids[c], "shipping": shipping})
        merchants.append(
            {
                "id": owner_id,
                "free_over": None if free_over < 0 else free_over,
                "discount": _discount_dict(int(f.owner_disc_min_units[o]), int(f.owner_disc_bp[o])),
                "nodes": nodes,
            }
        )
    return {"items": items, "merchants": merchants, "offers": problem._offers_dict(node=True)}


def column_labels(owners: tuple[str, ...], fulfillment: Fulfillment) -> tuple[str, ...]:
    """A unique label per column: the merchant's id where it has one node, else
    ``merchant@node`` (numbered on the rare clash with another merchant's id)."""
    counts = np.bincount(fulfillment.column_owner, minlength=len(owners))
    taken = set(owners)
    labels: list[str] = []
    for c, node_id in enumerate(fulfillment.node_ids):
        owner = owners[int(fulfillment.column_owner[c])]
        if counts[int(fulfillment.column_owner[c])] == 1:
            labels.append(owner)
            continue
        label, k = f"{owner}@{node_id}", 1
        while label in taken:
            label, k = f"{owner}@{node_id}#{k}", k + 1
        taken.add(label)
        labels.append(label)
    return tuple(labels)


def _column_params(
    size: int,
    base_fee: Any,
    per_extra_unit: Any,
    free_over: Any,
    disc_min_units: Any,
    disc_bp: Any,
    *,
    owner: np.ndarray | None,
) -> dict[str, np.ndarray]:
    """Per-column parameter arrays; where ``owner`` is given, the merchant-level ones (given
    per merchant) are spread over the merchant's columns."""
    n_terms = size if owner is None else None
    terms = {
        "free_over": _int_array("free_over", free_over, n_terms),
        "disc_min_units": _int_array("disc_min_units", disc_min_units, n_terms),
        "disc_bp": _int_array("disc_bp", disc_bp, n_terms),
    }
    _check_min("free_over", terms["free_over"], -1)
    _check_min("disc_min_units", terms["disc_min_units"], 0)
    _check_min("disc_bp", terms["disc_bp"], 0)
    _check_max("disc_bp", terms["disc_bp"], 10_000)
    if owner is not None:
        terms = {name: array[owner] for name, array in terms.items()}
    cols = {
        "base_fee": _int_array("base_fee", base_fee, size),
        "per_extra_unit": _int_array("per_extra_unit", per_extra_unit, size),
        **terms,
    }
    _check_min("base_fee", cols["base_fee"], 0)
    _check_min("per_extra_unit", cols["per_extra_unit"], 0)
    return cols


def _offer_grid(
    n: int,
    m: int,
    offer_item: Any,
    offer_column: Any,
    offer_price: Any,
    offer_stock: Any,
    items: tuple[str, ...],
    columns: tuple[str, ...],
) -> tuple[np.ndarray, np.ndarray]:
    o_item = _int_array("offer_item", offer_item)
    k = o_item.size
    o_column = _int_array("offer_merchant", offer_column, k)
    o_price = _int_array("offer_price", offer_price, k)
    o_stock = _int_array("offer_stock", offer_stock, k)
    _check_range("offer_item", o_item, n)
    _check_range("offer_merchant", o_column, m)
    _check_min("offer_price", o_price, 0)
    _check_min("offer_stock", o_stock, -1)
    grid_price = np.full((n, m), NO_OFFER, dtype=np.int64)
    grid_stock = np.full((n, m), UNLIMITED_STOCK, dtype=np.int64)
    for o in range(k):
        i, j = int(o_item[o]), int(o_column[o])
        if grid_price[i, j] != NO_OFFER:
            raise ProblemError(
                f"offers[{o}]", (items[i], columns[j]), "second offer for (item, merchant, node)"
            )
        grid_price[i, j] = o_price[o]
        grid_stock[i, j] = o_stock[o]
    return grid_price, grid_stock


def _check_max(name: str, array: np.ndarray, maximum: int) -> None:
    bad = np.flatnonzero(array > maximum)
    if bad.size:
        i = int(bad[0])
        raise ProblemError(f"{name}[{i}]", int(array[i]), f"must be <= {maximum}")


def _check_range(name: str, array: np.ndarray, size: int) -> None:
    bad = np.flatnonzero((array < 0) | (array >= size))
    if bad.size:
        i = int(bad[0])
        raise ProblemError(f"{name}[{i}]", int(array[i]), f"must be an index in 0..{size - 1}")


def _check_money_bounds(
    qty: np.ndarray, price: np.ndarray, mcols: dict[str, np.ndarray], fulfillment: Fulfillment
) -> None:
    """Refuse carts whose worst-case total (every part of every solver) could leave int64.

    The bound covers the dearest eligible offer per line, a parcel per line at the highest base
    fee and the highest weight fee the whole cart's weight could cost (the relaxed DP may price
    that many), and extra units at the highest per-unit fee. Python ints, so the check itself
    cannot overflow.
    """
    units = sum(int(q) for q in qty)
    goods = sum(int(q) * int(p) for q, p in zip(qty, price.max(axis=1), strict=True))
    weight = sum(int(q) * int(w) for q, w in zip(qty, fulfillment.weight, strict=True))
    if weight >= MONEY_LIMIT:
        raise ProblemError("items", weight, f"the cart's weight must stay below {MONEY_LIMIT} g")
    base = max((int(b) for b in mcols["base_fee"]), default=0)
    extra = max((int(e) for e in mcols["per_extra_unit"]), default=0)
    bound = goods + len(qty) * (base + _max_weight_fee(fulfillment, weight)) + extra * units
    bound += units
    if bound >= MONEY_LIMIT:
        raise ProblemError("items", bound, f"worst-case cart total must stay below {MONEY_LIMIT}")


def _max_weight_fee(fulfillment: Fulfillment, weight: int) -> int:
    """The dearest weight fee any parcel of at most ``weight`` grams could cost."""
    dearest = 0
    for c in range(len(fulfillment.node_ids)):
        tiers = fulfillment.tiers_of(c)
        if not tiers:
            continue
        over = max(0, weight - tiers[-1][0])
        kilos = -(-over // 1000)
        dearest = max(dearest, max(f for _, f in tiers) + int(fulfillment.per_kg_over[c]) * kilos)
    return dearest
