"""Peer solvers for the benchmarks: the exact spec cost as an integer linear model, solved by
HiGHS (``highspy``) and OR-Tools CP-SAT (``ortools``, the bench extra).

All variables are integers and all coefficients integers, so one model serves both solvers.
Per merchant m with lines L_m (x_im = line i bought from m; a_im = quantity * price;
S = sum a_im x_im, U = sum q_i x_im):

* used ``y`` >= x_im;
* discount: ``d`` = [U >= min_units] forced both ways; ``D`` = floor(S * bp / 10000) when d,
  else 0, through ``den*D <= num*S`` and ``den*D >= num*S - (den - 1)`` (num/den = bp/10000 in
  lowest terms, which keeps coefficients small);
* free shipping: ``f`` = [S - D >= free_over] forced both ways;
* ``pay`` >= y - f; ``W`` >= e * (U - 1) when pay (e = per_extra_unit);
* cost = S - D + base_fee * pay + W.

The peers' assignments are re-priced with the engine's pricing, so "agrees to the cent" means
the same total, never a solver tolerance.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from gpu_engine.pricing import assignment_cost
from gpu_engine.problem import CartProblem


@dataclass
class IntModel:
    """min c.x subject to row_lo <= A x <= row_hi, integer x in [lb, ub]."""

    lb: list[int] = field(default_factory=list)
    ub: list[int] = field(default_factory=list)
    cost: list[int] = field(default_factory=list)
    rows: list[tuple[list[int], list[int], float, float]] = field(default_factory=list)
    x_index: dict[tuple[int, int], int] = field(default_factory=dict)

    def var(self, lb: int, ub: int, cost: int = 0) -> int:
        self.lb.append(lb)
        self.ub.append(ub)
        self.cost.append(cost)
        return len(self.lb) - 1

    def row(self, cols: list[int], vals: list[int], lo: float, hi: float) -> None:
        self.rows.append((cols, vals, lo, hi))


INF = math.inf


def build_model(problem: CartProblem) -> IntModel:
    model = IntModel()
    eligible = problem.price >= 0
    amount = problem.quantity[:, None] * np.where(eligible, problem.price, 0)
    for i in range(problem.n_items):
        for j in np.flatnonzero(eligible[i]):
            model.x_index[(i, int(j))] = model.var(0, 1, int(amount[i, j]))
    for i in range(problem.n_items):
        cols = [model.x_index[(i, int(j))] for j in np.flatnonzero(eligible[i])]
        model.row(cols, [1] * len(cols), 1, 1)
    for m in range(problem.n_merchants):
        lines = np.flatnonzero(eligible[:, m])
        if lines.size:
            _merchant(model, problem, m, lines, amount)
    return model


def _merchant(model: IntModel, p: CartProblem, m: int, lines, amount) -> None:
    xs = [model.x_index[(int(i), m)] for i in lines]
    a = [int(amount[i, m]) for i in lines]
    q = [int(p.quantity[i]) for i in lines]
    s_max, u_max = sum(a), sum(q)
    y = model.var(0, 1)
    for x in xs:
        model.row([x, y], [1, -1], -INF, 0)
    # goods G = S - D, as (cols, vals) terms
    g_cols, g_vals = list(xs), list(a)
    bp, min_units = int(p.disc_bp[m]), int(p.disc_min_units[m])
    if min_units > 0 and bp > 0:
        g = math.gcd(bp, 10_000)
        num, den = bp // g, 10_000 // g
        d = model.var(0, 1)
        d_max = s_max * bp // 10_000
        big_d = model.var(0, d_max, -1)
        model.row([*xs, d], [*q, -min_units], 0, INF)
        model.row([*xs, d], [*q, -u_max], -INF, min_units - 1)
        model.row([big_d, *xs], [den, *(-num * v for v in a)], -INF, 0)
        slack = num * s_max + den
        model.row([big_d, *xs, d], [den, *(-num * v for v in a), -slack], -(den - 1) - slack, INF)
        model.row([big_d, d], [1, -d_max], -INF, 0)
        g_cols.append(big_d)
        g_vals.append(-1)
    pay = model.var(0, 1, int(p.base_fee[m]))
    free_over = int(p.free_over[m])
    if free_over >= 0:
        f = model.var(0, 1)
        model.row([*g_cols, f], [*g_vals, -free_over], 0, INF)
        model.row([*g_cols, f], [*g_vals, -(s_max + 1)], -INF, free_over - 1)
        model.row([pay, y, f], [1, -1, 1], 0, INF)
    else:
        model.row([pay, y], [1, -1], 0, INF)
    extra = int(p.per_extra_unit[m])
    if extra > 0:
        big_w = extra * u_max
        w = model.var(0, big_w, 1)
        model.row([w, *xs, pay], [1, *(-extra * v for v in q), -big_w], -extra - big_w, INF)


@dataclass
class PeerResult:
    solver: str
    total: int | None
    assignment: np.ndarray | None
    optimal: bool
    elapsed_ms: float
    status: str


def _choice(problem: CartProblem, model: IntModel, values) -> np.ndarray:
    choice = np.full(problem.n_items, -1, dtype=np.int64)
    for (i, m), col in model.x_index.items():
        if values[col] > 0.5:
            choice[i] = m
    return choice


def _priced(problem: CartProblem, choice: np.ndarray) -> int:
    return int(assignment_cost(choice, problem.quantity, problem.price, *problem.merchant_params))


def solve_highs(
    problem: CartProblem, *, time_limit_s: float = 60.0, threads: int = 1
) -> PeerResult:
    import highspy

    t0 = time.perf_counter()
    model = build_model(problem)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", threads)
    h.setOptionValue("time_limit", float(time_limit_s))
    # Integer objective: a gap below one cent is a proof; the default 1e-4 relative is not.
    h.setOptionValue("mip_rel_gap", 0.0)
    h.setOptionValue("mip_abs_gap", 0.5)
    n = len(model.lb)
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = len(model.rows)
    lp.col_cost_ = np.array(model.cost, dtype=np.float64)
    lp.col_lower_ = np.array(model.lb, dtype=np.float64)
    lp.col_upper_ = np.array(model.ub, dtype=np.float64)
    lp.row_lower_ = np.array([r[2] for r in model.rows], dtype=np.float64)
    lp.row_upper_ = np.array([r[3] for r in model.rows], dtype=np.float64)
    starts, index, value = [0], [], []
    for cols, vals, _, _ in model.rows:
        index.extend(cols)
        value.extend(vals)
        starts.append(len(index))
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.array(starts, dtype=np.int32)
    lp.a_matrix_.index_ = np.array(index, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(value, dtype=np.float64)
    lp.integrality_ = [highspy.HighsVarType.kInteger] * n
    h.passModel(lp)
    h.run()
    status = h.modelStatusToString(h.getModelStatus())
    values = h.getSolution().col_value
    elapsed = (time.perf_counter() - t0) * 1e3
    if not len(values):
        return PeerResult("highs", None, None, False, elapsed, status)
    choice = _choice(problem, model, values)
    return PeerResult(
        "highs", _priced(problem, choice), choice, status == "Optimal", elapsed, status
    )


def solve_cpsat(
    problem: CartProblem, *, time_limit_s: float = 60.0, workers: int = 1
) -> PeerResult:
    from ortools.sat.python import cp_model

    t0 = time.perf_counter()
    model = build_model(problem)
    cp = cp_model.CpModel()
    xs = [
        cp.new_int_var(lo, hi, f"v{k}")
        for k, (lo, hi) in enumerate(zip(model.lb, model.ub, strict=True))
    ]
    for cols, vals, lo, hi in model.rows:
        expr = sum(v * xs[c] for c, v in zip(cols, vals, strict=True))
        if lo > -INF:
            cp.add(expr >= int(lo))
        if hi < INF:
            cp.add(expr <= int(hi))
    cp.minimize(sum(c * xs[k] for k, c in enumerate(model.cost) if c))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = workers
    solver.parameters.max_time_in_seconds = float(time_limit_s)
    code = solver.solve(cp)
    elapsed = (time.perf_counter() - t0) * 1e3
    status = solver.status_name(code)
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return PeerResult("cpsat", None, None, False, elapsed, status)
    values = [solver.value(x) for x in xs]
    choice = _choice(problem, model, values)
    return PeerResult(
        "cpsat", _priced(problem, choice), choice, code == cp_model.OPTIMAL, elapsed, status
    )


PEERS: dict[str, Callable[..., PeerResult]] = {"highs": solve_highs, "cpsat": solve_cpsat}


def peers_available() -> dict[str, bool]:
    found = {}
    for name, module in (("highs", "highspy"), ("cpsat", "ortools")):
        try:
            __import__(module)
            found[name] = True
        except ImportError:
            found[name] = False
    return found


# --- process isolation ------------------------------------------------------------------------
# ortools' libortools bundles its own HiGHS, and the two libraries clash when loaded into one
# process (undefined-symbol ImportError for whichever comes second). Each peer therefore runs
# in its own worker process; timings are taken inside the worker, around each solve.


def run_peers(
    problems: list[CartProblem],
    *,
    solvers: tuple[str, ...] = ("highs", "cpsat"),
    repeats: int = 3,
    time_limit_s: float = 60.0,
) -> dict[str, list[dict]]:
    """For each available peer: one result dict per problem (median ms over ``repeats``)."""
    import json
    import subprocess
    import sys

    available = peers_available()
    out: dict[str, list[dict]] = {}
    payload = [p.to_dict() for p in problems]
    for name in solvers:
        if not available.get(name):
            out[name] = [{"error": f"{name} is not installed"} for _ in problems]
            continue
        request = {"solver": name, "problems": payload, "repeats": repeats, "limit": time_limit_s}
        done = subprocess.run(
            [sys.executable, "-m", "gpu_engine.bench.peers"],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            out[name] = [{"error": done.stderr.strip()[-500:]} for _ in problems]
            continue
        out[name] = json.loads(done.stdout)
    return out


def _worker(request: dict) -> list[dict]:
    solver = PEERS[request["solver"]]
    results = []
    for data in request["problems"]:
        problem = CartProblem.from_dict(data)
        runs = [solver(problem, time_limit_s=request["limit"]) for _ in range(request["repeats"])]
        last = runs[-1]
        results.append(
            {
                "solver": last.solver,
                "total": last.total,
                "optimal": last.optimal,
                "status": last.status,
                "median_ms": float(np.median([r.elapsed_ms for r in runs])),
                "assignment": None if last.assignment is None else last.assignment.tolist(),
            }
        )
    return results


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(_worker(json.loads(sys.stdin.read()))))
