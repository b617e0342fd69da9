"""Flat carts and their facility location data.

A merchant is flat when its cost is ``opening + sum of per-line costs`` for every set of lines
it may ship: no reachable discount, no free-shipping switch that some but not all shipments
reach, and ``base_fee >= per_extra_unit``. The spec's cost ``goods + base + per * (units - 1)``
is then ``(base - per) + sum q * (price + per)``; a merchant whose every shipment ships free
(threshold 0 or at most its cheapest line's goods, or no fees at all) costs ``goods`` alone. A
cart whose merchants are all flat is an uncapacitated facility location problem (UFL): opening
cost ``fee[m]``, line ``i`` served by ``m`` at ``q_i * (p_im + unit[m])``. All int64.

A version 2 cart's facilities are its columns (a merchant's nodes): each node that ships opens
a parcel, and its weight fee must be constant or linear in whole kilograms over the parcels it
can ship (:mod:`gpu_engine.solvers.flat.nodes`); a line then also pays ``kilo[c]`` per whole
kilogram it weighs. Version 1 carts (and version 2 carts as simple) keep the rule above.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from gpu_engine.problem import MONEY_LIMIT, CapacityError, CartProblem
from gpu_engine.solvers.flat.nodes import column_terms

# "No offer" in the dense cost matrix: above every real cost (the problem keeps totals below
# MONEY_LIMIT) and never added to another, so nothing overflows.
INF = MONEY_LIMIT


@dataclass(frozen=True, eq=False)
class FlatData:
    """The UFL of a flat cart over its columns (merchants, or a version 2 cart's nodes).
    ``fee`` int64[m]: opening costs (>= 0). ``cost`` int64[n, m]: serving costs, :data:`INF`
    where the line has no eligible offer. ``cand``/``cand_cost`` int64[n, k]: each line's
    eligible columns by ascending serving cost (ties by column index), padded with -1 / INF;
    ``cand_count`` int64[n]."""

    fee: np.ndarray
    cost: np.ndarray
    cand: np.ndarray
    cand_cost: np.ndarray
    cand_count: np.ndarray

    @property
    def n_lines(self) -> int:
        return int(self.cost.shape[0])

    @property
    def n_merchants(self) -> int:
        return int(self.cost.shape[1])


def _merchant_terms(problem: CartProblem) -> tuple[np.ndarray, np.ndarray, CapacityError | None]:
    """(opening cost, per-unit fee) per merchant, and the refusal naming the first merchant
    that is not flat (None when all are). Column-wise NumPy: a Python loop over merchants cost
    more than the whole solve."""
    eligible = problem.price >= 0
    serves = eligible.any(axis=0)
    goods = problem.quantity[:, None] * problem.price
    goods_max = np.where(eligible, goods, 0).sum(axis=0)
    goods_min = np.where(eligible, goods, INF).min(axis=0)
    units_max = np.where(eligible, problem.quantity[:, None], 0).sum(axis=0)
    base, per, free_over = problem.base_fee, problem.per_extra_unit, problem.free_over
    min_units, bp = problem.disc_min_units, problem.disc_bp
    always_free = ((base == 0) & (per == 0)) | ((free_over >= 0) & (free_over <= goods_min))
    discount = (min_units > 0) & (bp > 0) & (units_max >= min_units)
    threshold = ~always_free & (free_over >= 0) & (free_over <= goods_max)
    negative = ~always_free & (base < per)
    plain = serves & ~always_free
    fee = np.where(plain, base - per, 0).astype(np.int64)
    unit = np.where(plain, per, 0).astype(np.int64)
    bad = np.flatnonzero(serves & (discount | threshold | negative))
    if not bad.size:
        return fee, unit, None
    m = int(bad[0])
    path, merchant = f"merchants[{m}]", problem.merchant_ids[m]
    if discount[m]:
        refusal = CapacityError(
            f"{path}.discount",
            merchant,
            "a reachable discount makes the merchant's cost non-flat (algorithm flat)",
        )
    elif threshold[m]:
        refusal = CapacityError(
            f"{path}.shipping.free_over",
            merchant,
            "a reachable free-shipping threshold makes the merchant's cost non-flat "
            "(algorithm flat)",
        )
    else:
        refusal = CapacityError(
            f"{path}.shipping",
            merchant,
            "per_extra_unit above base_fee gives a negative opening cost (algorithm flat)",
        )
    return fee, unit, refusal


def _terms(
    problem: CartProblem,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, CapacityError | None]:
    """(opening cost, fee per unit, fee per whole kilogram of a line) per column, and the
    refusal naming the first merchant (or node) that is not flat."""
    if problem.simple:
        fee, unit, refusal = _merchant_terms(problem)
        return fee, unit, np.zeros_like(unit), refusal
    terms = column_terms(problem)
    return terms.fee, terms.unit, terms.kilo, terms.refusal


def is_flat(problem: CartProblem) -> bool:
    """Whether every merchant's cost is an opening cost plus per-line costs (module docstring)."""
    return _terms(problem)[3] is None


@numba.njit(cache=True)
def _ufl_arrays(quantity, price, cand_count, unit, kilo, kilos):
    """Dense serving costs and each line's candidates sorted by them (stable over column
    index, so ties go to the lower index). ``kilos[i]``: line i's whole kilograms, counted
    only where ``kilo`` is not 0 (such columns' lines all weigh whole kilograms)."""
    n, n_m = price.shape
    width = cand_count.max()
    cost = np.full((n, n_m), INF, dtype=np.int64)
    cand = np.full((n, width), -1, dtype=np.int64)
    cand_cost = np.full((n, width), INF, dtype=np.int64)
    for i in range(n):
        merchants = np.flatnonzero(price[i] >= 0)
        keys = np.empty(merchants.size, dtype=np.int64)
        for t in range(merchants.size):
            m = merchants[t]
            keys[t] = quantity[i] * (price[i, m] + unit[m]) + kilo[m] * kilos[i]
            cost[i, m] = keys[t]
        order = np.argsort(keys, kind="mergesort")
        for t in range(merchants.size):
            cand[i, t] = merchants[order[t]]
            cand_cost[i, t] = keys[order[t]]
    return cost, cand, cand_cost


def flat_data(problem: CartProblem) -> FlatData:
    """The cart's UFL; raises :class:`~gpu_engine.problem.CapacityError` naming the first
    merchant that is not flat (on a version 2 cart its subclass
    :class:`~gpu_engine.problem.FulfillmentUnsupported`, naming the merchant or node)."""
    fee, unit, kilo, refusal = _terms(problem)
    if refusal is not None:
        raise refusal
    count = problem.cand_count.astype(np.int64)
    kilos = problem.quantity * problem.fulfillment.weight // 1000
    cost, cand, cand_cost = _ufl_arrays(problem.quantity, problem.price, count, unit, kilo, kilos)
    return FlatData(fee=fee, cost=cost, cand=cand, cand_cost=cand_cost, cand_count=count)
