"""Exact merchant selection as a mixed-integer program, solved by HiGHS (``highspy``).

The model prices an assignment exactly as ``shared/spec/cart-pricing.md`` does, so a proven
HiGHS optimum is a proven optimum of the cart. For every eligible (line, merchant) pair a binary
``x`` says the line is bought there. Per merchant, with ``S`` = sum(q * p * x) the subtotal and
``U`` = sum(q * x) the units:

* ``y`` (binary) = the merchant ships something: ``x <= y`` per pair and ``y <= sum x``. The
  second half matters: ``base_fee - per_extra_unit`` may be negative.
* Never-free shipping is linear: ``(base - per) * y + per * U``.
* A free-shipping threshold ``F`` adds a binary ``f`` (free) and a continuous shipping cost
  ``s >= (base - per) * (y - f) + per * sum(q * (x - w))`` with ``w = x AND f`` per pair
  (``w <= x``, ``w <= f``), and ``S - D >= F * f``. Minimising pushes ``f`` to 1 whenever the
  goods reach ``F``, so "free at the threshold" holds at every optimum. The ``w`` form is exact on
  integral points and far tighter in the relaxation than one big-M on ``f``. The perspective row
  ``sum(q * p * w) >= F * f`` (valid: ``w = x`` when ``f = 1`` and the goods never exceed ``S``)
  makes the relaxation exact where the lines' merchants are integral: the aggregated row alone
  let a basket under ``F`` be ``S / F`` free (about half the LP's gap to the optimum where
  ``per > 0``). A flat fee (``per == 0``) needs no ``w`` (``s >= base * (y - f)``) and gets no
  perspective row: there the ``w`` columns slow the LP and HiGHS's proof more than the gap they
  close is worth. In both goods rows of ``f`` a line counts at most ``F`` (a line
  worth ``F`` frees shipping alone: valid, and tighter where ``x`` is fractional); a flat fee
  gets that capped row on ``x`` (``sum(min(q * p, F) * x) >= F * f``) where a line exceeds ``F``.
* A discount (``min_units``, ``bp``) adds a binary ``d`` (active) and an integer ``D`` (cents
  off): ``D <= bp/10000 * sum(q * p * z)`` with ``z = x AND d``, and ``sum(q * z) >= min_units *
  d`` (the perspective form of ``U >= min_units * d``, implied by it through ``z <= x``: with
  integral ``x`` a basket under ``min_units`` can no longer earn ``U / min_units`` of its
  discount), each line's units capped at ``min_units`` (one such line earns it alone).
  ``D`` integral and below ``bp * S / 10000`` is at most the spec's floor; minimising raises it to
  the floor. Where a threshold exists the solver could prefer a smaller discount to keep shipping
  free, so those merchants also get ``U <= min_units - 1 + big * d`` (the discount is taken
  whenever earned), ``z >= x + d - 1`` (``z`` is exactly ``x AND d``) and ``D >= bp/10000 *
  sum(q * p * z) - r * d`` (the floor, not less; ``r`` the most ``bp * S / 10000`` can exceed
  its floor by: 9999/10000 at most, 0 for a 100% discount, see ``_floor_slack``). The linked
  ``z`` keeps that last row free of a big-M on ``d``, which solves the LP faster for the same
  bound.

Where a threshold and a discount meet, the goods row also holds on binaries alone
(:func:`_add_discounted_goods_row`): ``(1 - rate) * S >= (F - r) * f - max(rate * F - r, 0) *
(1 - d)``, a knapsack row HiGHS separates covers from. The capped rows and the exact slack
tighten the LP and shorten HiGHS's proofs.

This is a simple cart's program (version 1 pricing); a version 2 cart's
(:mod:`gpu_engine.solvers.milp.fulfilled`) reuses its pieces over each merchant's nodes.

HiGHS works in floating point: the returned total is always re-priced in integer cents by the
engine's pricing routine, and optimality is claimed only when that exact total is within integer
rounding of HiGHS's dual bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpu_engine.pricing import price_assignment
from gpu_engine.problem import CartProblem

BP_SCALE = 10_000


@dataclass
class _MerchantCols:
    """Column indexes of one merchant's variables (-1: the merchant has no such variable)."""

    x: np.ndarray  # its pairs' x columns
    y: int = -1
    f: int = -1
    s: int = -1
    w: np.ndarray | None = None  # aligned with x
    d: int = -1
    big_d: int = -1
    z: np.ndarray | None = None  # aligned with x


@dataclass
class _Model:
    """Columns and rows of the program, collected then passed to HiGHS in one call."""

    cost: list[float] = field(default_factory=list)
    lower: list[float] = field(default_factory=list)
    upper: list[float] = field(default_factory=list)
    integer: list[bool] = field(default_factory=list)
    starts: list[int] = field(default_factory=lambda: [0])
    index: list[np.ndarray] = field(default_factory=list)
    value: list[np.ndarray] = field(default_factory=list)
    row_lower: list[float] = field(default_factory=list)
    row_upper: list[float] = field(default_factory=list)
    # ``left <= right`` rows, collected per merchant and emitted in one block at the end.
    le_left: list[np.ndarray] = field(default_factory=list)
    le_right: list[np.ndarray] = field(default_factory=list)

    def cols(self, count: int, *, cost: float, upper: float, integer: bool) -> np.ndarray:
        first = len(self.cost)
        self.cost.extend([cost] * count)
        self.lower.extend([0.0] * count)
        self.upper.extend([upper] * count)
        self.integer.extend([integer] * count)
        return np.arange(first, first + count, dtype=np.int64)

    def col(self, *, cost: float, upper: float, integer: bool) -> int:
        return int(self.cols(1, cost=cost, upper=upper, integer=integer)[0])

    def row(self, cols, vals, lower: float, upper: float) -> None:
        cols = np.asarray(cols, dtype=np.int32)
        self.index.append(cols)
        self.value.append(np.asarray(vals, dtype=np.float64))
        self.starts.append(self.starts[-1] + cols.size)
        self.row_lower.append(lower)
        self.row_upper.append(upper)

    def rows_le(self, left: np.ndarray, right) -> None:
        """One row ``left[k] <= right[k]`` per k (``right`` a column array or one column)."""
        self.le_left.append(left)
        self.le_right.append(np.broadcast_to(np.asarray(right, dtype=np.int64), left.shape))

    def rows_and(self, z: np.ndarray, x: np.ndarray, d: int) -> None:
        """One row ``z[k] >= x[k] + d - 1`` per k: with ``z <= x`` and ``z <= d``, ``z = x AND
        d`` at every integral point."""
        count = z.size
        cols = np.stack([z, x, np.full(count, d, dtype=np.int64)], axis=1)
        self.index.append(cols.astype(np.int32).ravel())
        self.value.append(np.tile([1.0, -1.0, -1.0], count))
        self.starts.extend((self.starts[-1] + 3 * np.arange(1, count + 1)).tolist())
        self.row_lower.extend([-1.0] * count)
        self.row_upper.extend([math.inf] * count)

    def _flush_le(self) -> None:
        if not self.le_left:
            return
        left, right = np.concatenate(self.le_left), np.concatenate(self.le_right)
        self.le_left, self.le_right = [], []
        self.index.append(np.stack([left, right], axis=1).astype(np.int32).ravel())
        self.value.append(np.tile([1.0, -1.0], left.size))
        self.starts.extend((self.starts[-1] + 2 * np.arange(1, left.size + 1)).tolist())
        self.row_lower.extend([-math.inf] * left.size)
        self.row_upper.extend([0.0] * left.size)

    def rows_one_of(self, x: np.ndarray, offsets: np.ndarray) -> None:
        """One row ``sum x[offsets[i]:offsets[i + 1]] == 1`` per line, as one block (a Python
        loop over a large cart's lines would take most of the build's time)."""
        count = offsets.size - 1
        self.index.append(x.astype(np.int32))
        self.value.append(np.ones(x.size))
        self.starts.extend((self.starts[-1] + offsets[1:]).tolist())
        self.row_lower.extend([1.0] * count)
        self.row_upper.extend([1.0] * count)

    def nonzeros(self) -> int:
        """The program's nonzeros so far (``le`` rows not yet flushed included)."""
        return sum(a.size for a in self.index) + 2 * sum(a.size for a in self.le_left)

    def arrays(self) -> HighsArrays:
        """The program as the flat arrays HiGHS takes (rows in CSR form)."""
        self._flush_le()
        inf = _highs_inf()
        return HighsArrays(
            cost=np.asarray(self.cost, dtype=np.float64),
            lower=np.asarray(self.lower, dtype=np.float64),
            upper=np.clip(np.asarray(self.upper, dtype=np.float64), -inf, inf),
            row_lower=np.clip(np.asarray(self.row_lower, dtype=np.float64), -inf, inf),
            row_upper=np.clip(np.asarray(self.row_upper, dtype=np.float64), -inf, inf),
            starts=np.asarray(self.starts, dtype=np.int32),
            index=np.concatenate(self.index).astype(np.int32),
            value=np.concatenate(self.value).astype(np.float64),
            integer=np.asarray(self.integer, dtype=np.int32),
        )


def _highs_inf() -> float:
    import highspy

    return float(highspy.kHighsInf)


@dataclass(frozen=True)
class HighsArrays:
    """The program in HiGHS's flat form: ``integer`` is 1 for an integral column, 0 for a
    continuous one (HiGHS's ``HighsVarType`` values)."""

    cost: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray
    starts: np.ndarray  # int32[n_rows + 1]
    index: np.ndarray  # int32[nnz]
    value: np.ndarray  # float64[nnz]
    integer: np.ndarray  # int32[n_cols]

    def as_dict(self) -> dict[str, np.ndarray]:
        """The arrays by name, as the solver process takes them
        (:mod:`gpu_engine.solvers.milp.highs_child`: numpy buffers go to highspy's array overload
        of ``passModel`` as they are)."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass(frozen=True)
class MilpModel:
    """The program of one cart and where each variable sits in it."""

    problem: CartProblem
    model: _Model
    x_line: np.ndarray  # int64[n_x]: line of each x column (x columns come first)
    x_merchant: np.ndarray  # int64[n_x]
    merchants: dict[int, _MerchantCols]
    money: float  # money_scale(problem)
    fulfilled: Any = None  # a version 2 cart's nodes and owners (None: a simple cart)

    @property
    def n_cols(self) -> int:
        return len(self.model.cost)

    @property
    def n_rows(self) -> int:
        return len(self.model.row_lower) + sum(a.size for a in self.model.le_left)


# Version 2 carts' program: :mod:`gpu_engine.solvers.milp.fulfilled` builds on this module's
# rows, so it registers its builder, money scale and point here when the package loads
# (``gpu_engine/solvers/milp/__init__.py``) instead of being imported from here.
VERSION_2: dict[str, Callable[..., Any]] = {}


def money_scale(problem: CartProblem) -> float:
    """The largest amount of cents one row of the cart's program can hold: over the merchants,
    the most goods it could sell (every line it offers, at its price), its free-shipping
    threshold and its largest shipping charge. HiGHS's tolerances are relative to such amounts
    (:mod:`gpu_engine.solvers.milp.runner`); a float is exact enough for a scale. A version 2
    cart's: :func:`gpu_engine.solvers.milp.fulfilled.fulfilled_money_scale`."""
    if not problem.simple:
        return VERSION_2["money_scale"](problem)
    lines, merchants = np.nonzero(problem.price >= 0)
    quantity = problem.quantity.astype(np.float64)
    goods = quantity[lines] * problem.price[lines, merchants].astype(np.float64)
    per_merchant = np.bincount(merchants, weights=goods, minlength=problem.n_merchants)
    units = np.bincount(merchants, weights=quantity[lines], minlength=problem.n_merchants)
    shipping = problem.base_fee.astype(np.float64) + problem.per_extra_unit * units
    return float(
        max(
            per_merchant.max(initial=0.0),
            shipping.max(initial=0.0),
            problem.free_over.max(initial=0),
        )
    )


# Beyond this many cents in one row HiGHS is not run at all: with larger rows it proves wrong
# optima, calls feasible carts infeasible or fails whatever its tolerances
# (:mod:`gpu_engine.solvers.milp.runner`). The exact DP, full search and GA (integer arithmetic)
# still answer such carts; ``algorithm="milp"`` refuses them (CapacityError on ``money``).
HIGHS_MAX_MONEY = 1e8


def highs_trusted(cart: CartProblem | float) -> bool:
    """HiGHS's answers on this cart (or on a program of this :func:`money_scale`) are exact to
    the cent: its rows stay within ``HIGHS_MAX_MONEY``."""
    money = money_scale(cart) if isinstance(cart, CartProblem) else cart
    return money <= HIGHS_MAX_MONEY


@dataclass(frozen=True)
class ProgramPairs:
    """The start both formulations share: one binary ``x`` per (line, merchant) pair, costing
    the pair's goods, the pairs of a line summing to one. ``x`` columns come first, line by line
    in the order of ``cand_merchant`` (:func:`choice_from_x` reads them so)."""

    model: _Model
    x: np.ndarray  # column of each pair
    x_line: np.ndarray  # int64[n_x]
    x_merchant: np.ndarray  # int64[n_x]
    units: np.ndarray  # quantity of each pair's line
    goods: np.ndarray  # quantity * price of each pair

    def by_merchant(self) -> Iterator[tuple[int, np.ndarray]]:
        """(merchant, indexes of its pairs) for every merchant with a pair."""
        order = np.argsort(self.x_merchant, kind="stable")
        n_merchants = int(self.x_merchant.max(initial=-1)) + 1
        bounds = np.searchsorted(self.x_merchant[order], np.arange(n_merchants + 1))
        for m in range(n_merchants):
            group = order[bounds[m] : bounds[m + 1]]
            if group.size:
                yield m, group


def program_pairs(problem: CartProblem) -> ProgramPairs:
    """A new program holding the cart's pair columns and its one-offer-per-line rows."""
    quantity = problem.quantity.astype(np.int64)
    counts = problem.cand_count.astype(np.int64)
    width = problem.cand_merchant.shape[1]
    x_line = np.repeat(np.arange(problem.n_items, dtype=np.int64), counts)
    x_merchant = problem.cand_merchant[np.arange(width)[None, :] < counts[:, None]].astype(np.int64)
    units = quantity[x_line]
    goods = units * problem.price[x_line, x_merchant]
    model = _Model()
    x = model.cols(x_line.size, cost=0.0, upper=1.0, integer=True)
    model.cost[: x.size] = goods.astype(np.float64).tolist()
    model.rows_one_of(x, np.concatenate(([0], np.cumsum(counts))))
    return ProgramPairs(model, x, x_line, x_merchant, units, goods)


class BuildCancelled(Exception):
    """``milp_build`` stopped because its ``cancelled`` callable said so."""


def milp_build(
    problem: CartProblem,
    *,
    cancelled: Callable[[], bool] | None = None,
    money: float | None = None,
) -> MilpModel:
    """The exact program of ``problem`` (see the module docstring). ``cancelled``: a callable
    polled between merchants; when it returns True the build stops with
    :class:`BuildCancelled` (a run cut at its deadline stops competing for the GIL at once).
    ``money``: the cart's :func:`money_scale` where the caller has it already. A version 2 cart
    gets :mod:`gpu_engine.solvers.milp.fulfilled`'s program (here a column is a merchant)."""
    if not problem.simple:
        return VERSION_2["build"](problem, cancelled=cancelled, money=money)
    pairs = program_pairs(problem)
    merchants: dict[int, _MerchantCols] = {}
    for m, group in pairs.by_merchant():
        if cancelled is not None and cancelled():
            raise BuildCancelled
        cols = _MerchantCols(x=pairs.x[group])
        _add_merchant(problem, pairs.model, m, cols, pairs.units[group], pairs.goods[group])
        merchants[m] = cols
    model, x_line, x_merchant = pairs.model, pairs.x_line, pairs.x_merchant
    money = money_scale(problem) if money is None else money
    return MilpModel(problem, model, x_line, x_merchant, merchants, money)


def _add_merchant(problem, model: _Model, m: int, cols: _MerchantCols, units, goods) -> None:
    cols.y = model.col(cost=0.0, upper=1.0, integer=True)
    model.rows_le(cols.x, cols.y)
    model.row(np.append(cols.x, cols.y), np.append(-np.ones(cols.x.size), 1.0), -math.inf, 0.0)
    _add_discount(problem, model, m, cols, units, goods)
    _add_shipping(problem, model, m, cols, units, goods)


def _has_threshold(problem: CartProblem, m: int) -> bool:
    """Free shipping depends on the goods value: a real switch in the model."""
    charges = problem.base_fee[m] > 0 or problem.per_extra_unit[m] > 0
    return int(problem.free_over[m]) > 0 and bool(charges)


def _add_discount(problem, model: _Model, m: int, cols, units, goods, threshold=None) -> None:
    """``threshold``: shipping switches on the goods (None: :func:`_has_threshold`'s answer)."""
    threshold = _has_threshold(problem, m) if threshold is None else threshold
    min_units, bp = int(problem.disc_min_units[m]), int(problem.disc_bp[m])
    u_max, s_max = int(units.sum()), int(goods.sum())
    d_max = s_max * bp // BP_SCALE
    if min_units < 1 or bp == 0 or u_max < min_units or d_max == 0:
        return
    rate = bp / BP_SCALE
    cols.d = model.col(cost=0.0, upper=1.0, integer=True)
    cols.big_d = model.col(cost=-1.0, upper=float(d_max), integer=True)
    cols.z = model.cols(cols.x.size, cost=0.0, upper=1.0, integer=False)
    model.row(np.append(cols.z, cols.big_d), np.append(-rate * goods, 1.0), -math.inf, 0.0)
    model.rows_le(cols.z, cols.x)
    model.rows_le(cols.z, cols.d)
    # A line of ``min_units`` or more earns the discount alone: its coefficient is capped there
    # (still valid, and tighter where ``z`` is fractional; see the module docstring).
    capped = np.minimum(units, min_units).astype(np.float64)
    model.row(np.append(cols.z, cols.d), np.append(capped, -float(min_units)), 0.0, math.inf)
    if threshold:
        model.row(
            np.append(cols.x, cols.d),
            np.append(units, -float(u_max - min_units + 1)),
            -math.inf,
            float(min_units - 1),
        )
        model.rows_and(cols.z, cols.x, cols.d)
        model.row(
            np.concatenate((cols.z, [cols.big_d, cols.d])),
            np.concatenate((-rate * goods, [1.0, _floor_slack(bp, goods)])),
            0.0,
            math.inf,
        )


def _floor_slack(bp: int, goods: np.ndarray) -> float:
    """The most ``bp * S / 10000`` can exceed its floor, for ``S`` a sum of these goods: ``bp *
    S`` is a multiple of ``g = gcd(bp * gcd(goods), 10000)``, so the remainder is at most ``10000
    - g`` (0 for a 100% discount). The spec's 9999 would leave the row a margin of 1/10000 of a
    cent, within HiGHS's tolerances once scaled: a 100%-discount cart ended 1 cent "free" there
    (the floor of 600 taken as 599)."""
    step = math.gcd(bp * int(np.gcd.reduce(goods.astype(np.int64))), BP_SCALE)
    return (BP_SCALE - step) / BP_SCALE


def _add_discounted_goods_row(
    problem: CartProblem, model: _Model, m: int, cols: _MerchantCols, goods, free_over: int
) -> None:
    """``(1 - rate) * S >= (F - r) * f - max(rate * F - r, 0) * (1 - d)`` on binaries alone (``r``:
    :func:`_floor_slack`): free shipping under an active discount needs ``(1 - rate) * S >= F -
    r`` (the goods are at most ``(1 - rate) * S + r``), without it ``S >= F``. The LP implies it
    through ``D`` only with a big-M on ``d``; as a row of ``x``, ``f`` and ``d`` it is a
    knapsack HiGHS separates covers from, which often shortens its proofs severalfold."""
    bp = int(problem.disc_bp[m])
    rate = bp / BP_SCALE
    slack = _floor_slack(bp, goods)
    # Without d the right side drops to ``(1 - rate) * F`` at most (``S >= F``), and never
    # below 0 where ``f`` is 0 too: ``max(rate * F - r, 0)``.
    off = max(rate * free_over - slack, 0.0)
    model.row(
        np.concatenate((cols.x, [cols.f, cols.d])),
        np.concatenate(((1.0 - rate) * goods.astype(np.float64), [slack - free_over, -off])),
        -off,
        math.inf,
    )


def _add_shipping(problem, model: _Model, m: int, cols: _MerchantCols, units, goods) -> None:
    base, per = int(problem.base_fee[m]), int(problem.per_extra_unit[m])
    free_over = int(problem.free_over[m])
    if free_over == 0 or (base == 0 and per == 0):
        return
    units = units.astype(np.float64)
    if free_over < 0:
        model.cost[cols.y] += base - per
        for c, u in zip(cols.x.tolist(), units.tolist(), strict=True):
            model.cost[c] += per * u
        return
    cols.f = model.col(cost=0.0, upper=1.0, integer=True)
    cols.s = model.col(cost=1.0, upper=math.inf, integer=False)
    goods_cols = np.append(cols.x, cols.f)
    goods_vals = np.append(goods.astype(np.float64), -float(free_over))
    if cols.big_d >= 0:
        goods_cols = np.append(goods_cols, cols.big_d)
        goods_vals = np.append(goods_vals, -1.0)
    model.row(goods_cols, goods_vals, 0.0, math.inf)
    if cols.d >= 0:
        _add_discounted_goods_row(problem, model, m, cols, goods, free_over)
    model.row([cols.f, cols.y], [1.0, -1.0], -math.inf, 0.0)
    # A line whose goods reach the threshold frees shipping alone: its goods count at most
    # ``free_over`` in the capped rows (see the module docstring).
    capped = np.minimum(goods, free_over).astype(np.float64)
    if per == 0:
        # A flat fee: no per-line term, so no ``w`` (see the module docstring).
        model.row([cols.s, cols.y, cols.f], [1.0, -float(base), float(base)], 0.0, math.inf)
        if np.any(goods > free_over):
            model.row(
                np.append(cols.x, cols.f), np.append(capped, -float(free_over)), 0.0, math.inf
            )
        return
    cols.w = model.cols(cols.x.size, cost=0.0, upper=1.0, integer=False)
    model.row(
        np.concatenate((cols.x, cols.w, [cols.s, cols.y, cols.f])),
        np.concatenate((-per * units, per * units, [1.0, -(base - per), base - per])),
        0.0,
        math.inf,
    )
    model.rows_le(cols.w, cols.x)
    model.rows_le(cols.w, cols.f)
    model.row(np.append(cols.w, cols.f), np.append(capped, -float(free_over)), 0.0, math.inf)


def milp_point(milp: MilpModel, choice: np.ndarray) -> np.ndarray:
    """The value of every column for an assignment: a feasible point (HiGHS's warm start).
    Money comes from the pricing routine's breakdown, so the point prices as the spec does."""
    if milp.fulfilled is not None:
        return VERSION_2["point"](milp, choice)
    problem = milp.problem
    choice = np.asarray(choice, dtype=np.int64)
    values = np.zeros(milp.n_cols)
    values[: milp.x_line.size] = choice[milp.x_line] == milp.x_merchant
    merchant_index = {merchant: m for m, merchant in enumerate(problem.merchant_ids)}
    for shipment in price_assignment(problem, choice):
        m = merchant_index[shipment.merchant]
        cols = milp.merchants.get(m)
        if cols is None:
            continue
        values[cols.y] = 1.0
        if cols.d >= 0 and shipment.units >= problem.disc_min_units[m]:
            values[cols.d] = 1.0
            values[cols.big_d] = shipment.discount
            values[cols.z] = values[cols.x]
        if cols.f >= 0:
            if shipment.subtotal - shipment.discount >= problem.free_over[m]:
                values[cols.f] = 1.0
                if cols.w is not None:
                    values[cols.w] = values[cols.x]
            else:
                values[cols.s] = shipment.shipping
    return values


def choice_from_x(problem: CartProblem, milp: MilpModel, x: np.ndarray) -> np.ndarray:
    """The merchant with the largest ``x`` per line (one is ~1 at any feasible point)."""
    offsets = np.concatenate(([0], np.cumsum(problem.cand_count, dtype=np.int64)))
    choice = np.empty(problem.n_items, dtype=np.int64)
    for i in range(problem.n_items):
        lo, hi = offsets[i], offsets[i + 1]
        choice[i] = milp.x_merchant[lo + int(np.argmax(x[lo:hi]))]
    return choice
