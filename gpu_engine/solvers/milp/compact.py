"""The cart's program in a compact form: one binary per (line, merchant) pair and a handful of
columns per merchant, every objective column integral.

:mod:`gpu_engine.solvers.milp.model` adds a column per pair for each switch (``w = x AND f``,
``z = x AND d``): a tighter relaxation that proves most carts sooner, but on some (merchants'
goods a hair above their thresholds, one-cent ties between offers) HiGHS proves this compact form
first, by seconds: every objective column here is an integer with an integral cost, so HiGHS
rounds its bound up to whole cents at every node. The planner runs both side by side on long
budgets (:func:`gpu_engine.solvers.milp.runner.milp_portfolio`).

Per merchant, with ``S = sum(q * p * x)``, ``U = sum(q * x)``:

* ``y`` (binary): ships something (``x <= y``);
* a discount adds ``d`` (binary: ``U >= min_units``, both ways by big-M on ``U``) and ``D``
  (integer cents off, cost -1): ``D <= rate * S`` and, while ``d``, ``D >= rate * S - r`` with
  ``r`` the most ``rate * S`` exceeds its floor (``model._floor_slack``), so ``D`` is the floor;
* ``pay`` (binary, cost ``base_fee``): ``pay >= y - f``, with ``f`` (binary) free shipping, forced
  both ways by big-M on the goods ``S - D`` against ``free_over``;
* ``per_extra_unit`` adds ``W`` (integer, cost 1): ``W >= per * (U - 1)`` while ``pay``.
"""

from __future__ import annotations

import math

import numpy as np

from gpu_engine.problem import CartProblem, require_simple
from gpu_engine.solvers.milp.model import (
    BP_SCALE,
    MilpModel,
    _floor_slack,
    _MerchantCols,
    _Model,
    money_scale,
    program_pairs,
)


def compact_build(problem: CartProblem, *, money: float | None = None) -> MilpModel:
    """The compact program of ``problem``. Its x columns come first, line by line in the order
    of ``cand_merchant``, as in :func:`~gpu_engine.solvers.milp.model.milp_build`, so that
    :func:`~gpu_engine.solvers.milp.model.choice_from_x` reads both; it takes no warm start
    (``merchants`` is empty). Version 1 pricing only: a version 2 cart has no compact form
    (the portfolio runs its one program alone)."""
    require_simple(problem.fulfillment, "milp (compact form)")
    pairs = program_pairs(problem)
    for m, group in pairs.by_merchant():
        x, units, goods = pairs.x[group], pairs.units[group], pairs.goods[group]
        _add_merchant(problem, pairs.model, m, x, units, goods)
    money = money_scale(problem) if money is None else money
    return MilpModel(problem, pairs.model, pairs.x_line, pairs.x_merchant, {}, money)


def _add_merchant(problem, model: _Model, m: int, x, units, goods) -> None:
    cols = _MerchantCols(x=x)
    cols.y = model.col(cost=0.0, upper=1.0, integer=True)
    model.rows_le(x, cols.y)
    goods_cols, goods_vals = list(x), goods.astype(np.float64).tolist()
    if _add_discount(problem, model, m, cols, units, goods):
        goods_cols.append(cols.big_d)
        goods_vals.append(-1.0)
    _add_shipping(problem, model, m, cols, units, goods, goods_cols, goods_vals)


def _add_discount(problem, model: _Model, m: int, cols: _MerchantCols, units, goods) -> bool:
    min_units, bp = int(problem.disc_min_units[m]), int(problem.disc_bp[m])
    u_max, s_max = int(units.sum()), int(goods.sum())
    d_max = s_max * bp // BP_SCALE
    if min_units < 1 or bp == 0 or u_max < min_units or d_max == 0:
        return False
    rate = bp / BP_SCALE
    slack = _floor_slack(bp, goods)
    cols.d = model.col(cost=0.0, upper=1.0, integer=True)
    cols.big_d = model.col(cost=-1.0, upper=float(d_max), integer=True)
    x, d, big_d = list(cols.x), cols.d, cols.big_d
    units_f = units.astype(np.float64).tolist()
    model.row([*x, d], [*units_f, -float(min_units)], 0.0, math.inf)
    model.row([*x, d], [*units_f, -float(u_max)], -math.inf, float(min_units - 1))
    scaled = (-rate * goods.astype(np.float64)).tolist()
    model.row([big_d, *x], [1.0, *scaled], -math.inf, 0.0)
    big = rate * s_max
    model.row([big_d, *x, d], [1.0, *scaled, -big], -slack - big, math.inf)
    model.row([big_d, d], [1.0, -float(d_max)], -math.inf, 0.0)
    return True


def _add_shipping(problem, model, m, cols, units, goods, goods_cols, goods_vals) -> None:
    base, per = int(problem.base_fee[m]), int(problem.per_extra_unit[m])
    free_over = int(problem.free_over[m])
    pay = model.col(cost=float(base), upper=1.0, integer=True)
    if free_over >= 0:
        s_max = int(goods.sum())
        cols.f = model.col(cost=0.0, upper=1.0, integer=True)
        model.row([*goods_cols, cols.f], [*goods_vals, -float(free_over)], 0.0, math.inf)
        model.row(
            [*goods_cols, cols.f],
            [*goods_vals, -float(s_max + 1)],
            -math.inf,
            float(free_over - 1),
        )
        model.row([pay, cols.y, cols.f], [1.0, -1.0, 1.0], 0.0, math.inf)
    else:
        model.row([pay, cols.y], [1.0, -1.0], 0.0, math.inf)
    if per > 0:
        big_w = float(per * int(units.sum()))
        w = model.col(cost=1.0, upper=big_w, integer=True)
        model.row(
            [w, *cols.x, pay],
            [1.0, *(-per * units.astype(np.float64)).tolist(), -big_w],
            -per - big_w,
            math.inf,
        )
