"""The exact program of a version 2 cart: lines go to *columns* (one node of one merchant),
parcels are priced per node and by weight, thresholds and discounts per merchant.

The ``x`` columns and their one-offer-per-line rows are :func:`~.model.program_pairs`' (a pair
is a line and a column). Per column ``c`` (a node), with ``U_c = sum(q * x)`` its units and
``W_c = sum(q * g * x)`` its grams:

* ``open_c`` (binary): ``x <= open_c`` per pair and ``open_c <= sum x`` (``base_fee -
  per_extra_unit`` may be negative, so an empty node must not count as open);
* the weight fee is a step function of ``W_c``: one binary per *segment* (a tier's gram range
  ``[previous up_to + 1, up_to]``, and ``[last up_to + 1, most grams the node can ship]`` for
  the over-tier), summing to ``open_c``, with ``W_c <= sum(up * seg)`` and ``W_c >= sum(lo *
  seg)``. Both sides: tier fees need not increase, so without the lower side a light parcel
  could take a cheaper heavier tier. The over-tier adds ``k_c`` (integer kilograms started):
  ``1000 * k_c >= W_c - last_up * open_c``, which binds only where the over-tier holds ``W_c``
  (any other segment keeps ``W_c <= last_up``); ``per_kg_over >= 0`` pushes ``k_c`` down to the
  spec's ceiling. Segments a node cannot reach are left out and neighbours of one fee merged; a
  node whose weight fee is one constant adds it to its base fee;
* the parcel's fee is ``(base - per + const) * open_c + per * U_c + sum(fee * seg) + per_kg *
  k_c``: a cost where the merchant never ships free.

Per merchant ``o`` (an *owner* of columns), over all its columns' pairs:

* a discount is :func:`~.model._add_discount`'s, on the owner's pairs (``z = x AND d``, the
  integer ``D`` held to the floor of ``bp * S / 10000`` where a threshold can switch);
* a free-shipping threshold ``F`` adds ``f`` (binary) with :func:`~.model._add_shipping`'s goods
  rows (``S - D >= F * f``, the perspective row on ``w = x AND f`` where some node charges per
  unit, the capped row otherwise, the discounted-goods knapsack) and per column a continuous
  ``s_c >= 0`` (cost 1) with ``s_c >= (base - per + const) * (open_c - g_c) + per * sum(q * (x
  - w)) + sum(fee * (seg - segf)) + per_kg * (k_c - kf_c)``, where ``g_c``, ``segf``, ``kf_c``
  are ``open_c``, ``seg`` and ``k_c`` while ``f`` (each at most both: minimising raises them to
  that). With ``f = 0`` the row is the parcel's fee; with ``f = 1`` every term is at most 0.
  ``g_c`` exists only where its coefficient is positive (else ``open_c`` alone is the tighter).
  Minimising raises ``f`` to 1 whenever the goods reach ``F``: free shipping only lowers costs.

Every amount is an integer and every switch exact at integral points, so a proven HiGHS optimum
is the cart's optimum up to HiGHS's tolerances, which the runner guards (money scale, integer
re-pricing of every answer, optimality only where the exact total meets HiGHS's bound).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from gpu_engine.problem import CartProblem
from gpu_engine.solvers.milp.model import (
    BP_SCALE,
    VERSION_2,
    BuildCancelled,
    MilpModel,
    ProgramPairs,
    _add_discount,
    _add_discounted_goods_row,
    _MerchantCols,
    _Model,
    program_pairs,
)

KG = 1000


@dataclass(frozen=True)
class Segment:
    """A gram range ``lo..up`` of one node's weight fee; ``over``: the over-tier (its fee is the
    last tier's, plus ``per_kg_over`` a started kilogram over ``lo - 1``)."""

    lo: int
    up: int
    fee: int
    over: bool = False


@dataclass
class NodeCols:
    """Columns of one node's parcel (-1: none). ``pairs``: indexes of its pairs."""

    column: int
    pairs: np.ndarray
    segments: list[Segment]
    const_fee: int = 0  # a weight fee that is the same for every parcel the node can ship
    open: int = -1
    seg: np.ndarray | None = None  # one binary per segment (None: one segment, ``const_fee``)
    k: int = -1
    k_max: int = 0
    s: int = -1
    g: int = -1
    segf: np.ndarray | None = None
    kf: int = -1


@dataclass
class OwnerCols:
    """One merchant's columns: ``cols`` holds ``x`` over all its pairs and its ``d``, ``D``,
    ``z``, ``f``, ``w`` (as :class:`~.model._MerchantCols`); ``pairs`` index those pairs."""

    owner: int
    pairs: np.ndarray
    cols: _MerchantCols
    nodes: list[NodeCols] = field(default_factory=list)


@dataclass(frozen=True)
class Fulfilled:
    """What a version 2 program adds to :class:`~.model.MilpModel` (its ``fulfilled``)."""

    owners: list[OwnerCols]
    pair_grams: np.ndarray  # quantity * weight of each pair's line


def weight_segments(problem: CartProblem, column: int, grams_max: int) -> list[Segment]:
    """The node's weight-fee segments that a parcel of at most ``grams_max`` grams can reach,
    neighbours of one fee merged (empty: the node has no tiers)."""
    f = problem.fulfillment
    tiers = f.tiers_of(column)
    if not tiers:
        return []
    out: list[Segment] = []
    lo = 0
    for up, fee in tiers:
        if lo > grams_max:
            break
        if out and out[-1].fee == fee:
            out[-1] = Segment(out[-1].lo, up, fee)
        else:
            out.append(Segment(lo, up, fee))
        lo = up + 1
    last_up, last_fee = tiers[-1]
    if grams_max > last_up:
        per_kg = int(f.per_kg_over[column])
        if per_kg == 0 and out[-1].fee == last_fee and not out[-1].over:
            out[-1] = Segment(out[-1].lo, grams_max, last_fee)
        else:
            out.append(Segment(last_up + 1, grams_max, last_fee, over=per_kg > 0))
    return out


def _node_charges(problem: CartProblem, node: NodeCols) -> bool:
    c = node.column
    fees = node.const_fee > 0 or any(s.fee > 0 or s.over for s in node.segments)
    return bool(problem.base_fee[c] > 0 or problem.per_extra_unit[c] > 0 or fees)


def fulfilled_build(
    problem: CartProblem,
    *,
    cancelled: Callable[[], bool] | None = None,
    money: float | None = None,
) -> MilpModel:
    """The exact program of a version 2 ``problem`` (see the module docstring); ``cancelled`` and
    ``money`` as :func:`~.model.milp_build` takes them."""
    pairs = program_pairs(problem)
    f = problem.fulfillment
    grams = problem.quantity[pairs.x_line].astype(np.int64) * f.weight[pairs.x_line]
    owner_of_pair = f.column_owner[pairs.x_merchant]
    owners: list[OwnerCols] = []
    for o in np.unique(owner_of_pair).tolist():
        if cancelled is not None and cancelled():
            raise BuildCancelled
        idx = np.flatnonzero(owner_of_pair == o)
        owner = OwnerCols(owner=o, pairs=idx, cols=_MerchantCols(x=pairs.x[idx]))
        for c in np.unique(pairs.x_merchant[idx]).tolist():
            node_pairs = idx[pairs.x_merchant[idx] == c]
            segments = weight_segments(problem, c, int(grams[node_pairs].sum()))
            node = NodeCols(column=c, pairs=node_pairs, segments=segments)
            if len(segments) == 1:
                node.const_fee, node.segments = segments[0].fee, []
            owner.nodes.append(node)
        _add_owner(problem, pairs, grams, owner)
        owners.append(owner)
    if money is None:
        money = fulfilled_money_scale(problem)
    return MilpModel(
        problem, pairs.model, pairs.x_line, pairs.x_merchant, {}, money, Fulfilled(owners, grams)
    )


def _add_owner(problem: CartProblem, pairs: ProgramPairs, grams, owner: OwnerCols) -> None:
    model, cols = pairs.model, owner.cols
    o, first = owner.owner, owner.nodes[0].column
    free_over = int(problem.fulfillment.owner_free_over[o])
    charged = [n for n in owner.nodes if _node_charges(problem, n)]
    # Free from the first cent (``F == 0``) or never charged: no parcel costs anything.
    threshold = free_over > 0 and bool(charged)
    units, goods = pairs.units[owner.pairs], pairs.goods[owner.pairs]
    # The owner's terms are copied on each of its columns: the first one's are the owner's.
    _add_discount(problem, model, first, cols, units, goods, threshold=threshold)
    if free_over == 0 or not charged:
        return
    if free_over > 0:
        _add_free_switch(problem, model, first, cols, pairs, owner, free_over)
    for node in charged:
        _add_parcel(problem, model, pairs, grams, node, cols if free_over > 0 else None)


def _add_free_switch(problem, model: _Model, first: int, cols, pairs, owner, free_over) -> None:
    """``f`` and the goods rows of :func:`~.model._add_shipping`, over the owner's pairs."""
    goods = pairs.goods[owner.pairs]
    cols.f = model.col(cost=0.0, upper=1.0, integer=True)
    goods_cols = np.append(cols.x, cols.f)
    goods_vals = np.append(goods.astype(np.float64), -float(free_over))
    if cols.big_d >= 0:
        goods_cols = np.append(goods_cols, cols.big_d)
        goods_vals = np.append(goods_vals, -1.0)
    model.row(goods_cols, goods_vals, 0.0, math.inf)
    if cols.d >= 0:
        _add_discounted_goods_row(problem, model, first, cols, goods, free_over)
    capped = np.minimum(goods, free_over).astype(np.float64)
    if any(problem.per_extra_unit[n.column] > 0 for n in owner.nodes):
        cols.w = model.cols(cols.x.size, cost=0.0, upper=1.0, integer=False)
        model.rows_le(cols.w, cols.x)
        model.rows_le(cols.w, cols.f)
        model.row(np.append(cols.w, cols.f), np.append(capped, -float(free_over)), 0.0, math.inf)
    elif np.any(goods > free_over):
        model.row(np.append(cols.x, cols.f), np.append(capped, -float(free_over)), 0.0, math.inf)


def _add_parcel(problem, model: _Model, pairs, grams, node: NodeCols, owner_cols) -> None:
    """The node's ``open``, weight segments and fee: as costs (``owner_cols`` None: never free)
    or in ``s`` under the owner's ``f``."""
    c = node.column
    base, per = int(problem.base_fee[c]), int(problem.per_extra_unit[c])
    x = pairs.x[node.pairs]
    units = pairs.units[node.pairs].astype(np.float64)
    node_grams = grams[node.pairs].astype(np.float64)
    node.open = model.col(cost=0.0, upper=1.0, integer=True)
    model.rows_le(x, node.open)
    model.row(np.append(x, node.open), np.append(-np.ones(x.size), 1.0), -math.inf, 0.0)
    if node.segments:
        _add_segments(problem, model, x, node_grams, node)
    fixed = float(base - per + node.const_fee)
    fees = [float(s.fee) for s in node.segments]
    per_kg = float(problem.fulfillment.per_kg_over[c])
    if owner_cols is None:
        model.cost[node.open] += fixed
        for col, u in zip(x.tolist(), units.tolist(), strict=True):
            model.cost[col] += per * u
        if node.seg is not None:
            for col, fee in zip(node.seg.tolist(), fees, strict=True):
                model.cost[col] += fee
        if node.k >= 0:
            model.cost[node.k] += per_kg
        return
    f = owner_cols.f
    node.s = model.col(cost=1.0, upper=math.inf, integer=False)
    row_cols, row_vals = [node.s, node.open], [1.0, -fixed]
    if fixed > 0:
        node.g = model.col(cost=0.0, upper=1.0, integer=False)
        model.rows_le(np.array([node.g]), node.open)
        model.rows_le(np.array([node.g]), f)
        row_cols.append(node.g)
        row_vals.append(fixed)
    if per > 0:
        # The owner's ``w`` are aligned with its pairs; this node's are a part of them.
        w = owner_cols.w[np.searchsorted(owner_cols.x, x)]
        row_cols += [*x.tolist(), *w.tolist()]
        row_vals += [*(-per * units).tolist(), *(per * units).tolist()]
    if node.seg is not None:
        node.segf = model.cols(node.seg.size, cost=0.0, upper=1.0, integer=False)
        model.rows_le(node.segf, node.seg)
        model.rows_le(node.segf, f)
        row_cols += [*node.seg.tolist(), *node.segf.tolist()]
        row_vals += [-fee for fee in fees] + fees
    if node.k >= 0:
        node.kf = model.col(cost=0.0, upper=float(node.k_max), integer=False)
        model.rows_le(np.array([node.kf]), node.k)
        model.row([node.kf, f], [1.0, -float(node.k_max)], -math.inf, 0.0)
        row_cols += [node.k, node.kf]
        row_vals += [-per_kg, per_kg]
    model.row(row_cols, row_vals, 0.0, math.inf)


def _add_segments(problem, model: _Model, x, node_grams, node: NodeCols) -> None:
    """One binary a segment, summing to ``open``, holding the node's grams both ways; ``k``
    for the over-tier (see the module docstring)."""
    n = len(node.segments)
    node.seg = model.cols(n, cost=0.0, upper=1.0, integer=True)
    model.row(np.append(node.seg, node.open), np.append(np.ones(n), -1.0), 0.0, 0.0)
    ups = np.array([float(s.up) for s in node.segments])
    los = np.array([float(s.lo) for s in node.segments])
    model.row(np.append(x, node.seg), np.append(node_grams, -ups), -math.inf, 0.0)
    if los.any():
        model.row(np.append(x, node.seg), np.append(node_grams, -los), 0.0, math.inf)
    over = node.segments[-1]
    if over.over and problem.fulfillment.per_kg_over[node.column] > 0:
        last_up = over.lo - 1
        node.k_max = -(-(over.up - last_up) // KG)
        node.k = model.col(cost=0.0, upper=float(node.k_max), integer=True)
        model.row(
            np.concatenate((x, [node.k, node.open])),
            np.concatenate((-node_grams, [float(KG), float(last_up)])),
            0.0,
            math.inf,
        )


def fulfilled_money_scale(problem: CartProblem) -> float:
    """:func:`~.model.money_scale` of a version 2 cart: over the merchants, the most goods one
    could sell, its threshold, and over the nodes the largest parcel fee and the most grams one
    could ship (weight rows hold grams, to the gram)."""
    f = problem.fulfillment
    lines, columns = np.nonzero(problem.price >= 0)
    quantity = problem.quantity.astype(np.float64)
    goods = quantity[lines] * problem.price[lines, columns].astype(np.float64)
    # A line ships from one node of its merchant: its dearest one counts, once.
    line_goods = np.zeros((problem.n_items, f.n_owners))
    np.maximum.at(line_goods, (lines, f.column_owner[columns]), goods)
    owner_goods = line_goods.sum(axis=0)
    units = np.bincount(columns, weights=quantity[lines], minlength=problem.n_merchants)
    grams = np.bincount(
        columns, weights=quantity[lines] * f.weight[lines], minlength=problem.n_merchants
    )
    last_up = f.tier_up[np.arange(problem.n_merchants), np.maximum(f.tier_count - 1, 0)]
    kilos = np.where(f.tier_count > 0, np.ceil(np.maximum(grams - last_up, 0) / KG), 0)
    parcel = (
        problem.base_fee.astype(np.float64)
        + problem.per_extra_unit * units
        + f.tier_fee.max(axis=1, initial=0)
        + f.per_kg_over * kilos
    )
    return float(
        max(
            owner_goods.max(initial=0.0),
            parcel.max(initial=0.0),
            grams.max(initial=0.0),
            f.owner_free_over.max(initial=0),
        )
    )


def fulfilled_point(milp: MilpModel, choice: np.ndarray) -> np.ndarray:
    """:func:`~.model.milp_point` of a version 2 program: every column's value for an
    assignment (column index per line), in integers as the spec prices it."""
    problem, ful = milp.problem, milp.fulfilled
    f = problem.fulfillment
    choice = np.asarray(choice, dtype=np.int64)
    values = np.zeros(milp.n_cols)
    chosen = choice[milp.x_line] == milp.x_merchant
    values[: milp.x_line.size] = chosen
    pair_goods = problem.quantity[milp.x_line] * problem.price[milp.x_line, milp.x_merchant]
    pair_units = problem.quantity[milp.x_line]
    for owner in ful.owners:
        cols, o = owner.cols, owner.owner
        mine = owner.pairs[chosen[owner.pairs]]
        subtotal = sum(int(v) for v in pair_goods[mine])
        units = sum(int(v) for v in pair_units[mine])
        min_units, bp = int(f.owner_disc_min_units[o]), int(f.owner_disc_bp[o])
        discount = 0
        if min_units > 0 and units >= min_units:
            discount = subtotal * bp // 10_000
            if cols.d >= 0:
                values[cols.d] = 1.0
                values[cols.big_d] = discount
                values[cols.z] = values[cols.x]
        free = cols.f >= 0 and subtotal - discount >= int(f.owner_free_over[o])
        if free:
            values[cols.f] = 1.0
            if cols.w is not None:
                values[cols.w] = values[cols.x]
        for node in owner.nodes:
            _node_point(milp, node, values, chosen, free=free)
    return values


def _node_point(milp: MilpModel, node: NodeCols, values, chosen, *, free: bool) -> None:
    problem, ful, x_line = milp.problem, milp.fulfilled, milp.x_line
    if node.open < 0:
        return
    mine = node.pairs[chosen[node.pairs]]
    if mine.size == 0:
        return
    c = node.column
    grams = sum(int(v) for v in ful.pair_grams[mine])
    units = sum(int(v) for v in problem.quantity[x_line[mine]])
    values[node.open] = 1.0
    weight_fee = node.const_fee
    if node.seg is not None:
        s = next(t for t, seg in enumerate(node.segments) if seg.lo <= grams <= seg.up)
        values[node.seg[s]] = 1.0
        weight_fee = node.segments[s].fee
        if node.k >= 0 and node.segments[s].over:
            kilos = -(-(grams - (node.segments[s].lo - 1)) // KG)
            values[node.k] = kilos
            weight_fee += int(problem.fulfillment.per_kg_over[c]) * kilos
    if free:
        if node.g >= 0:
            values[node.g] = 1.0
        if node.segf is not None:
            values[node.segf] = values[node.seg]
        if node.kf >= 0:
            values[node.kf] = values[node.k]
    elif node.s >= 0:
        base, per = int(problem.base_fee[c]), int(problem.per_extra_unit[c])
        values[node.s] = base + per * (units - 1) + weight_fee


def fulfilled_price_bound(problem: CartProblem) -> int:
    """A proven lower bound from prices alone: every line at its cheapest column after the
    largest discount its merchant could earn there (the GA's bound counts a column's units
    only, and a merchant's discount counts the units of all its nodes)."""
    f = problem.fulfillment
    lines, columns = np.nonzero(problem.price >= 0)
    owners = f.column_owner[columns]
    # The most units a merchant could ship: each line once, at any of its nodes.
    shipped = np.zeros((problem.n_items, f.n_owners), dtype=bool)
    shipped[lines, owners] = True
    units_max = (shipped * problem.quantity[:, None]).sum(axis=0)
    earns = (f.owner_disc_min_units > 0) & (units_max >= f.owner_disc_min_units)
    bp = np.where(earns, f.owner_disc_bp, 0)[owners]
    per_line: list[float] = [math.inf] * problem.n_items
    for i, c, b in zip(lines.tolist(), columns.tolist(), bp.tolist(), strict=True):
        scaled = int(problem.quantity[i]) * int(problem.price[i, c]) * (BP_SCALE - int(b))
        per_line[i] = min(per_line[i], scaled)
    return -(-sum(int(v) for v in per_line) // BP_SCALE)


VERSION_2.update(build=fulfilled_build, money_scale=fulfilled_money_scale, point=fulfilled_point)
