"""Flatness of a version 2 cart: every fulfillment node a facility.

A merchant's cost splits over its nodes (``goods + sum of parcel fees``) exactly when neither
its discount nor its free-shipping threshold can switch (:mod:`gpu_engine.solvers.flat.data`
says when). A node's parcel ``base + per * (units - 1) + weight_fee(weight)`` is then an opening
cost plus per-line costs when its weight fee is one of:

* a constant ``F`` over every weight a parcel of this node can have (no tiers; one tier, or
  tiers of one fee, holding every such weight; one started kilogram past the last tier, or a
  ``per_kg_over`` of 0): opening ``base - per + F``;
* linear in whole kilograms: every line the node can ship weighs whole kilograms, and every
  parcel at least the last tier's ``up_to_g``. ``ceil((w - up) / 1000)`` is then
  ``w / 1000 - up // 1000``, so the opening is ``base - per + last fee - per_kg * (up // 1000)``
  and a line pays ``per_kg`` per kilogram it weighs.

A node's parcels weigh between its lightest eligible line and all its eligible lines together,
an interval that holds every parcel it can ship: the tests below are sufficient, never guessed.
An opening cost below zero is refused (the dual ascent needs fees >= 0). Python ints where a
product could leave int64 before it is known to fit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpu_engine.problem import MONEY_LIMIT, CartProblem, FulfillmentUnsupported

REASON = "(algorithm flat)"
# Above any line's goods (the problem keeps them below MONEY_LIMIT).
INF_GOODS = MONEY_LIMIT


@dataclass(frozen=True)
class ColumnTerms:
    """Per column: opening cost ``fee``, fee per unit ``unit`` and per whole kilogram of a line
    ``kilo`` (int64); ``refusal`` names the first merchant or node that is not flat."""

    fee: np.ndarray
    unit: np.ndarray
    kilo: np.ndarray
    refusal: FulfillmentUnsupported | None


def _weight_term(
    tiers: list[tuple[int, int]], per_kg: int, lightest: int, heaviest: int, whole_kilos: bool
) -> tuple[int, int] | None:
    """(constant part, fee per kilogram) of the weight fee of every parcel weighing between
    ``lightest`` and ``heaviest`` grams; None when it is neither constant nor linear there."""
    if not tiers:
        return 0, 0
    fees: set[int] = set()
    low = 0
    for up, fee in tiers:
        if low <= heaviest and up >= lightest:
            fees.add(fee)
        low = up + 1
    last_up, last_fee = tiers[-1]
    if heaviest > last_up:
        first = -(-(max(lightest, last_up + 1) - last_up) // 1000)
        most = -(-(heaviest - last_up) // 1000)
        fees.update({last_fee + per_kg * first, last_fee + per_kg * most})
    if len(fees) == 1:
        return fees.pop(), 0
    if whole_kilos and lightest >= last_up:
        return last_fee - per_kg * (last_up // 1000), per_kg
    return None


def _refusal(field: str, value: object, reason: str) -> FulfillmentUnsupported:
    return FulfillmentUnsupported(field, value, f"{reason} {REASON}")


def _weight_terms(
    problem: CartProblem, eligible: np.ndarray, grams: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per column: the constant and per-kilogram parts of its weight fee over the parcels it
    can ship, and whether it is neither (:func:`_weight_term`). A constant below
    ``-MONEY_LIMIT`` (a huge ``per_kg_over`` times the last tier's kilograms) is stored as
    ``-MONEY_LIMIT``: the opening cost is negative and refused either way."""
    f = problem.fulfillment
    n_columns = problem.n_merchants
    constant = np.zeros(n_columns, dtype=np.int64)
    per_kilo = np.zeros(n_columns, dtype=np.int64)
    bad = np.zeros(n_columns, dtype=np.bool_)
    serves = eligible.any(axis=0)
    tiered = np.flatnonzero(serves & (f.tier_count > 0))
    if not tiered.size:
        return constant, per_kilo, bad
    at = eligible[:, tiered]
    lightest = np.where(at, grams[:, None], INF_GOODS).min(axis=0)
    heaviest = np.where(at, grams[:, None], 0).sum(axis=0)
    whole = ~np.any(at & (grams[:, None] % 1000 != 0), axis=0)
    for k, c in enumerate(tiered.tolist()):
        term = _weight_term(
            f.tiers_of(c),
            int(f.per_kg_over[c]),
            int(lightest[k]),
            int(heaviest[k]),
            bool(whole[k]),
        )
        if term is None:
            bad[c] = True
        else:
            constant[c], per_kilo[c] = max(term[0], -MONEY_LIMIT), term[1]
    return constant, per_kilo, bad


def column_terms(problem: CartProblem) -> ColumnTerms:
    """The facility terms of a version 2 cart's columns (module docstring)."""
    f = problem.fulfillment
    eligible = problem.price >= 0
    quantity = problem.quantity
    goods = quantity[:, None] * problem.price
    starts = np.flatnonzero(np.r_[True, np.diff(f.column_owner) != 0])
    # Per merchant, over all its nodes: what its lines can reach together, and the least one
    # shipment of it can be.
    reach = np.logical_or.reduceat(eligible, starts, axis=1)
    serves = reach.any(axis=0)
    goods_max = np.maximum.reduceat(np.where(eligible, goods, 0), starts, axis=1).sum(axis=0)
    goods_min = np.minimum.reduceat(np.where(eligible, goods, INF_GOODS).min(axis=0), starts)
    units_max = np.where(reach, quantity[:, None], 0).sum(axis=0)
    free_over, min_units, bp = f.owner_free_over, f.owner_disc_min_units, f.owner_disc_bp
    discount = (min_units > 0) & (bp > 0) & (units_max >= min_units)
    free_always = (free_over >= 0) & (free_over <= goods_min)
    reachable = (free_over >= 0) & (free_over <= goods_max)

    base, per = problem.base_fee, problem.per_extra_unit
    constant, per_kilo, bad_weight = _weight_terms(problem, eligible, quantity * f.weight)
    column_serves = eligible.any(axis=0)
    no_fees = (base == 0) & (per == 0) & (constant == 0) & (per_kilo == 0) & ~bad_weight
    # A merchant none of whose parcels can cost anything ships free whatever its threshold.
    charges = np.logical_or.reduceat(~no_fees & column_serves, starts)
    plain = serves & ~free_always & charges
    opening = base - per + constant
    open_columns = plain[f.column_owner] & column_serves
    bad_node = open_columns & (bad_weight | (opening < 0))
    threshold = plain & reachable
    bad_owner = serves & (discount | threshold)
    bad_owner |= np.logical_or.reduceat(bad_node, starts)
    refusal = None
    if bad_owner.any():
        refusal = _first_refusal(
            problem, int(np.flatnonzero(bad_owner)[0]), discount, threshold, bad_weight, bad_node
        )
    return ColumnTerms(
        fee=np.where(open_columns, opening, 0).astype(np.int64),
        unit=np.where(open_columns, per, 0).astype(np.int64),
        kilo=np.where(open_columns, per_kilo, 0).astype(np.int64),
        refusal=refusal,
    )


def _first_refusal(
    problem: CartProblem,
    owner: int,
    discount: np.ndarray,
    threshold: np.ndarray,
    bad_weight: np.ndarray,
    bad_node: np.ndarray,
) -> FulfillmentUnsupported:
    """The refusal of merchant ``owner``, the first that is not flat: its discount, its
    threshold (``threshold``: reachable, and some parcel of the merchant charged), or its first
    node that is not (by weight fee, or by a negative opening cost)."""
    f = problem.fulfillment
    path, owner_id = f"merchants[{owner}]", f.owner_ids[owner]
    if discount[owner]:
        return _refusal(
            f"{path}.discount", owner_id, "a reachable discount makes the merchant's cost non-flat"
        )
    if threshold[owner]:
        return _refusal(
            f"{path}.free_over",
            owner_id,
            "a reachable free-shipping threshold makes the merchant's cost non-flat",
        )
    columns = np.flatnonzero(f.column_owner == owner)
    c = int(columns[bad_node[columns]][0])
    node_path = f"{path}.nodes[{c - int(columns[0])}].shipping"
    where = (owner_id, f.node_ids[c])
    if bad_weight[c]:
        return _refusal(
            f"{node_path}.weight_tiers",
            where,
            "a parcel from this node may cross a weight tier or a started kilogram, so its "
            "fee is not an opening cost plus per-line costs",
        )
    return _refusal(
        node_path,
        where,
        "per_extra_unit above base_fee and the weight fee gives a negative opening cost",
    )
