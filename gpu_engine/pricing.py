"""The one pricing routine of the engine (spec: ``shared/spec/cart-pricing.md``).

:func:`merchant_cost` is the only place where the spec's cost formula is written. It is a
``numba.njit`` function: CPU solvers call it directly and the CUDA kernels call the same object
from inside ``@cuda.jit`` code (numba-cuda compiles CPU dispatchers as device functions), so
every solver computes the same cents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numba
import numpy as np

from gpu_engine.problem import CartProblem, ProblemError
from gpu_engine.solution import MerchantCost, Parcel

BP_SCALE = 10_000


@numba.njit(cache=True)
def merchant_cost(subtotal, units, base_fee, per_extra_unit, free_over, disc_min_units, disc_bp):
    """Cost of one merchant's shipment of ``units`` units worth ``subtotal`` cents.

    ``free_over`` < 0 means never free; ``disc_min_units`` == 0 means no discount. The discount
    ``subtotal * bp // 10000`` is computed as ``(s // 10000) * bp + (s % 10000) * bp // 10000``,
    which is equal for non-negative integers and never forms the large product, so int64 (or
    int32 on the GPU, where the host proved the values fit) cannot overflow.
    """
    if units == 0:
        return 0
    goods = subtotal
    if disc_min_units > 0 and units >= disc_min_units:
        goods = subtotal - (
            (subtotal // BP_SCALE) * disc_bp + ((subtotal % BP_SCALE) * disc_bp) // BP_SCALE
        )
    if free_over >= 0 and goods >= free_over:
        return goods
    return goods + base_fee + per_extra_unit * (units - 1)


@numba.njit(cache=True)
def assignment_cost(
    choice, quantity, price, base_fee, per_extra_unit, free_over, disc_min_units, disc_bp
):
    """Total cost of ``choice`` (merchant index per line). Eligibility is the caller's duty."""
    n_merchants = base_fee.shape[0]
    subtotal = np.zeros(n_merchants, dtype=np.int64)
    units = np.zeros(n_merchants, dtype=np.int64)
    for i in range(choice.shape[0]):
        m = choice[i]
        subtotal[m] += quantity[i] * price[i, m]
        units[m] += quantity[i]
    total = 0
    for m in range(n_merchants):
        total += merchant_cost(
            subtotal[m],
            units[m],
            base_fee[m],
            per_extra_unit[m],
            free_over[m],
            disc_min_units[m],
            disc_bp[m],
        )
    return total


@numba.njit(cache=True)
def weight_fee(weight, tier_up, tier_fee, n_tiers, per_kg_over):
    """A parcel's fee by weight: the first tier that holds ``weight``, else the last tier's fee
    plus ``per_kg_over`` per started kilogram over it; 0 without tiers."""
    if n_tiers == 0:
        return 0
    for t in range(n_tiers):
        if weight <= tier_up[t]:
            return tier_fee[t]
    over = weight - tier_up[n_tiers - 1]
    return tier_fee[n_tiers - 1] + per_kg_over * ((over + 999) // 1000)


@numba.njit(cache=True)
def parcel_fee(units, weight, base_fee, per_extra_unit, tier_up, tier_fee, n_tiers, per_kg_over):
    """The fee of one node's parcel of ``units`` units weighing ``weight`` grams (0 if empty)."""
    if units == 0:
        return 0
    return (
        base_fee
        + per_extra_unit * (units - 1)
        + weight_fee(weight, tier_up, tier_fee, n_tiers, per_kg_over)
    )


@numba.njit(cache=True)
def owner_cost(subtotal, units, parcels, free_over, disc_min_units, disc_bp):
    """A merchant's cost: its discounted goods, plus ``parcels`` (the summed fees of its
    nodes' parcels) unless the goods reach ``free_over``. :func:`merchant_cost` is this with
    one parcel of no weight tiers."""
    if units == 0:
        return 0
    # merchant_cost with no shipping fees is exactly the discounted goods.
    goods = merchant_cost(subtotal, units, 0, 0, -1, disc_min_units, disc_bp)
    if free_over >= 0 and goods >= free_over:
        return goods
    return goods + parcels


@numba.njit(cache=True)
def fulfilled_cost(
    choice,
    quantity,
    weight,
    price,
    column_owner,
    base_fee,
    per_extra_unit,
    tier_up,
    tier_fee,
    tier_count,
    per_kg_over,
    owner_free_over,
    owner_disc_min_units,
    owner_disc_bp,
):
    """Total cost of ``choice`` (column index per line) under version 2's rules. Eligibility is
    the caller's duty."""
    n_columns = base_fee.shape[0]
    n_owners = owner_free_over.shape[0]
    subtotal = np.zeros(n_columns, dtype=np.int64)
    units = np.zeros(n_columns, dtype=np.int64)
    grams = np.zeros(n_columns, dtype=np.int64)
    for i in range(choice.shape[0]):
        c = choice[i]
        subtotal[c] += quantity[i] * price[i, c]
        units[c] += quantity[i]
        grams[c] += quantity[i] * weight[i]
    owner_sub = np.zeros(n_owners, dtype=np.int64)
    owner_units = np.zeros(n_owners, dtype=np.int64)
    owner_parcels = np.zeros(n_owners, dtype=np.int64)
    for c in range(n_columns):
        o = column_owner[c]
        owner_sub[o] += subtotal[c]
        owner_units[o] += units[c]
        owner_parcels[o] += parcel_fee(
            units[c],
            grams[c],
            base_fee[c],
            per_extra_unit[c],
            tier_up[c],
            tier_fee[c],
            tier_count[c],
            per_kg_over[c],
        )
    total = 0
    for o in range(n_owners):
        total += owner_cost(
            owner_sub[o],
            owner_units[o],
            owner_parcels[o],
            owner_free_over[o],
            owner_disc_min_units[o],
            owner_disc_bp[o],
        )
    return total


def fulfilled_args(problem: CartProblem) -> tuple:
    """:func:`fulfilled_cost`'s arguments after ``choice`` for ``problem``."""
    f = problem.fulfillment
    return (
        problem.quantity,
        f.weight,
        problem.price,
        f.column_owner,
        problem.base_fee,
        problem.per_extra_unit,
        *f.parcel_params,
        *f.owner_params,
    )


def total_of(problem: CartProblem, choice: np.ndarray) -> int:
    """The total of ``choice`` (column index per line, eligible) under the spec's rules."""
    choice = np.asarray(choice, dtype=np.int64)
    return int(fulfilled_cost(choice, *fulfilled_args(problem)))


# Which form of merchant_cost the CUDA kernels call: the njit dispatcher itself, or its Python
# source compiled by cuda.jit once a numba-cuda has refused the dispatcher (some versions do).
_device_variant = {"name": "njit"}


def device_pricing_variant() -> str:
    """The form CUDA kernels call now (part of every kernel cache key)."""
    return _device_variant["name"]


def device_pricing_fallback() -> bool:
    """Switch the kernels to the ``cuda.jit`` form after a numba-cuda refused the dispatcher;
    False when they already use it (the failure was something else)."""
    if _device_variant["name"] != "njit":
        return False
    _device_variant["name"] = "cuda.jit(py_func)"
    return True


def device_merchant_cost():
    """:func:`merchant_cost` as CUDA kernels call it (see :func:`device_pricing_variant`).
    numba.cuda is imported here, on use, never when this module is imported."""
    if _device_variant["name"] == "njit":
        return merchant_cost
    from numba import cuda

    return cuda.jit(device=True)(merchant_cost.py_func)


def choice_from_assignment(
    problem: CartProblem, assignment: Mapping[str, Any] | Sequence[int] | np.ndarray
) -> np.ndarray:
    """A validated column-index-per-line vector from a dict (line id -> merchant id, column
    label, or ``[merchant id, node id]``) or an index array. A bare merchant id names that
    merchant's node when it has one. Raises :class:`ProblemError` for unknown ids, missing lines
    or ineligible picks."""
    if isinstance(assignment, Mapping):
        choice = _choice_from_mapping(problem, assignment)
    else:
        choice = np.asarray(assignment)
        if choice.shape != (problem.n_items,) or (choice.size and choice.dtype.kind not in "iu"):
            raise ProblemError("assignment", choice.tolist(), "must be one merchant index a line")
        choice = choice.astype(np.int64)
        bad = np.flatnonzero((choice < 0) | (choice >= problem.n_merchants))
        if bad.size:
            i = int(bad[0])
            raise ProblemError(f"assignment[{i}]", int(choice[i]), "is not a merchant index")
    ineligible = np.flatnonzero(problem.price[np.arange(problem.n_items), choice] < 0)
    if ineligible.size:
        i = int(ineligible[0])
        raise ProblemError(
            f"assignment.{problem.item_ids[i]}",
            problem.merchant_ids[int(choice[i])],
            "merchant has no eligible offer for this line",
        )
    return choice


def _choice_from_mapping(problem: CartProblem, assignment: Mapping[str, Any]) -> np.ndarray:
    unknown = sorted(set(assignment) - set(problem.item_ids))
    if unknown:
        raise ProblemError(f"assignment.{unknown[0]}", unknown[0], "is not a line of the cart")
    columns = {label: j for j, label in enumerate(problem.merchant_ids)}
    by_node = problem.fulfillment.column_of()
    choice = np.empty(problem.n_items, dtype=np.int64)
    for i, item_id in enumerate(problem.item_ids):
        if item_id not in assignment:
            raise ProblemError(f"assignment.{item_id}", None, "line is not assigned")
        value = assignment[item_id]
        if isinstance(value, list | tuple) and len(value) == 2 and tuple(value) in by_node:
            choice[i] = by_node[tuple(value)]
        elif isinstance(value, str) and value in columns:
            choice[i] = columns[value]
        else:
            raise ProblemError(f"assignment.{item_id}", value, "is not a merchant (and node)")
    return choice


def price_assignment(
    problem: CartProblem, assignment: Mapping[str, Any] | Sequence[int] | np.ndarray
) -> list[MerchantCost]:
    """Per-merchant breakdown of an assignment (merchants that ship nothing are left out),
    in merchant order, each with its parcels (one per node that ships). The total is
    ``sum(c.cost for c in breakdown)``."""
    choice = choice_from_assignment(problem, assignment)
    f = problem.fulfillment
    owner_of_line = f.column_owner[choice]
    breakdown = []
    for o in np.unique(owner_of_line):
        lines = np.flatnonzero(owner_of_line == o)
        parcels = [_parcel(problem, choice, int(c)) for c in np.unique(choice[lines])]
        # Python ints: exact however large the cart.
        subtotal = sum(int(problem.quantity[i]) * int(problem.price[i, choice[i]]) for i in lines)
        units = sum(p.units for p in parcels)
        terms = [int(t[o]) for t in f.owner_params]
        fees = sum(p.fee for p in parcels)
        cost = int(owner_cost(subtotal, units, fees, *terms))
        goods = int(owner_cost(subtotal, units, 0, -1, *terms[1:]))
        free = cost == goods and fees > 0
        breakdown.append(
            MerchantCost(
                merchant=f.owner_ids[int(o)],
                lines=tuple(problem.item_ids[i] for i in lines),
                units=units,
                subtotal=subtotal,
                discount=subtotal - goods,
                shipping=cost - goods,
                cost=cost,
                parcels=tuple(replace(p, fee=0) if free else p for p in parcels),
            )
        )
    return breakdown


def _parcel(problem: CartProblem, choice: np.ndarray, column: int) -> Parcel:
    f = problem.fulfillment
    lines = np.flatnonzero(choice == column)
    units = sum(int(problem.quantity[i]) for i in lines)
    grams = sum(int(problem.quantity[i]) * int(f.weight[i]) for i in lines)
    fee = parcel_fee(
        units,
        grams,
        int(problem.base_fee[column]),
        int(problem.per_extra_unit[column]),
        f.tier_up[column],
        f.tier_fee[column],
        int(f.tier_count[column]),
        int(f.per_kg_over[column]),
    )
    return Parcel(
        node=f.node_ids[column],
        lines=tuple(problem.item_ids[i] for i in lines),
        units=units,
        weight_g=grams,
        fee=int(fee),
    )
