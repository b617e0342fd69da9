"""OR-Tools CP-SAT on version 2 carts: the peer the fulfillment benchmarks compare against.

Written from the spec, independent of the engine's HiGHS program: one Boolean per eligible
(line, column); per column an open flag, units and grams; per column a tier choice forced by
its grams (so tier fees need not increase) and whole started kilograms over the last tier; per
merchant the discount flag (units reach ``min_units``, both ways), the floor of the discount
(two inequalities), the free-shipping flag (goods reach ``free_over``, both ways) and shipping
that is the sum of its open parcels unless free. Everything is an integer; the answer is
re-priced with :func:`gpu_engine.pricing.total_of`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpu_engine.pricing import total_of
from gpu_engine.problem import CartProblem


@dataclass(frozen=True)
class PeerResult:
    total: int
    choice: np.ndarray
    optimal: bool
    elapsed_ms: float
    status: str


def solve_cpsat_v2(
    problem: CartProblem, *, time_limit_s: float = 60.0, threads: int = 1
) -> PeerResult:
    from ortools.sat.python import cp_model

    started = time.perf_counter()
    # Typed loosely: ortools' stubs differ across releases (Minimize / minimize).
    model: Any = cp_model.CpModel()
    x = _assignment(model, problem)
    cost = []
    f = problem.fulfillment
    for o in range(f.n_owners):
        columns = [int(c) for c in np.flatnonzero(f.column_owner == o)]
        cost.extend(_owner(model, problem, x, o, columns))
    model.Minimize(sum(cost))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = threads
    solver.parameters.max_time_in_seconds = time_limit_s
    code = solver.Solve(model)
    elapsed = (time.perf_counter() - started) * 1e3
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise RuntimeError(f"CP-SAT: {solver.StatusName(code)}")
    choice = np.zeros(problem.n_items, dtype=np.int64)
    for (i, c), var in x.items():
        if solver.Value(var):
            choice[i] = c
    total = total_of(problem, choice)
    if code == cp_model.OPTIMAL and total != round(solver.ObjectiveValue()):
        raise RuntimeError(f"CP-SAT's objective {solver.ObjectiveValue()} != priced {total}")
    return PeerResult(total, choice, code == cp_model.OPTIMAL, elapsed, solver.StatusName(code))


def _assignment(model, problem: CartProblem) -> dict[tuple[int, int], Any]:
    x: dict[tuple[int, int], Any] = {}
    for i in range(problem.n_items):
        picks = []
        for c in np.flatnonzero(problem.price[i] >= 0):
            x[(i, int(c))] = model.NewBoolVar(f"x{i}_{c}")
            picks.append(x[(i, int(c))])
        model.AddExactlyOne(picks)
    return x


def _owner(model, problem: CartProblem, x, o: int, columns: list[int]) -> list:
    f = problem.fulfillment
    q = problem.quantity
    served = [(i, c) for (i, c) in x if c in columns]
    if not served:
        return []
    sub_ub = sum(int(q[i]) * int(problem.price[i, c]) for i, c in served)
    units_ub = sum(int(q[i]) for i in {i for i, _ in served})
    sub = model.NewIntVar(0, sub_ub, f"sub{o}")
    model.Add(sub == sum(int(q[i]) * int(problem.price[i, c]) * x[(i, c)] for i, c in served))
    units = model.NewIntVar(0, units_ub, f"units{o}")
    model.Add(units == sum(int(q[i]) * x[(i, c)] for i, c in served))
    terms = int(f.owner_disc_min_units[o]), int(f.owner_disc_bp[o])
    goods = _goods(model, o, sub, units, sub_ub, *terms)
    parcels = [_parcel(model, problem, x, c) for c in columns]
    parcel_ub = sum(ub for _, ub in parcels)
    shipping = model.NewIntVar(0, parcel_ub, f"ship{o}")
    free_over = int(f.owner_free_over[o])
    if free_over < 0:
        model.Add(shipping >= sum(p for p, _ in parcels))
    else:
        free = model.NewBoolVar(f"free{o}")
        model.Add(goods >= free_over).OnlyEnforceIf(free)
        model.Add(goods <= free_over - 1).OnlyEnforceIf(free.Not())
        model.Add(shipping >= sum(p for p, _ in parcels)).OnlyEnforceIf(free.Not())
    return [goods, shipping]


def _goods(model, o: int, sub, units, sub_ub: int, min_units: int, bp: int):
    if min_units == 0 or bp == 0:
        return sub
    on = model.NewBoolVar(f"disc_on{o}")
    model.Add(units >= min_units).OnlyEnforceIf(on)
    model.Add(units <= min_units - 1).OnlyEnforceIf(on.Not())
    discount = model.NewIntVar(0, sub_ub, f"disc{o}")
    # discount = floor(sub * bp / 10000) when on, else 0.
    model.Add(10_000 * discount <= bp * sub).OnlyEnforceIf(on)
    model.Add(10_000 * discount >= bp * sub - 9_999).OnlyEnforceIf(on)
    model.Add(discount == 0).OnlyEnforceIf(on.Not())
    goods = model.NewIntVar(0, sub_ub, f"goods{o}")
    model.Add(goods == sub - discount)
    return goods


def _parcel(model, problem: CartProblem, x, c: int) -> tuple[Any, int]:
    """(the parcel fee variable of column ``c``, an upper bound of it)."""
    f = problem.fulfillment
    q, w = problem.quantity, f.weight
    lines = [i for (i, c2) in x if c2 == c]
    units_ub = sum(int(q[i]) for i in lines)
    grams_ub = sum(int(q[i]) * int(w[i]) for i in lines)
    opened = model.NewBoolVar(f"open{c}")
    for i in lines:
        model.AddImplication(x[(i, c)], opened)
    model.Add(sum(x[(i, c)] for i in lines) >= 1).OnlyEnforceIf(opened)
    units = sum(int(q[i]) * x[(i, c)] for i in lines)
    grams = model.NewIntVar(0, grams_ub, f"grams{c}")
    model.Add(grams == sum(int(q[i]) * int(w[i]) * x[(i, c)] for i in lines))
    base, extra = int(problem.base_fee[c]), int(problem.per_extra_unit[c])
    weight_fee, weight_ub = _weight_fee(model, f, c, opened, grams, grams_ub)
    ub = base + extra * max(0, units_ub - 1) + weight_ub
    fee = model.NewIntVar(0, ub, f"parcel{c}")
    model.Add(fee == base * opened + extra * (units - opened) + weight_fee)
    return fee, ub


def _weight_fee(model, f, c: int, opened, grams, grams_ub: int):
    tiers = f.tiers_of(c)
    if not tiers:
        return 0, 0
    picks, fees, low = [], [], 0
    for t, (up_to, fee) in enumerate(tiers):
        pick = model.NewBoolVar(f"tier{c}_{t}")
        model.Add(grams <= up_to).OnlyEnforceIf(pick)
        model.Add(grams >= low).OnlyEnforceIf(pick)
        picks.append(pick)
        fees.append(fee)
        low = up_to + 1
    last_up, last_fee = tiers[-1]
    per_kg = int(f.per_kg_over[c])
    over = model.NewBoolVar(f"over{c}")
    model.Add(grams >= last_up + 1).OnlyEnforceIf(over)
    kilos_ub = max(0, -(-(grams_ub - last_up) // 1000))
    kilos = model.NewIntVar(0, kilos_ub, f"kg{c}")
    model.Add(1000 * kilos >= grams - last_up).OnlyEnforceIf(over)
    model.Add(kilos == 0).OnlyEnforceIf(over.Not())
    model.Add(sum(picks) + over == opened)
    value = sum(fee * p for fee, p in zip(fees, picks, strict=True)) + last_fee * over
    ub = max([*fees, last_fee]) + per_kg * kilos_ub
    return value + per_kg * kilos, ub


def run_cpsat_v2(problem: CartProblem, *, time_limit_s: float, threads: int = 1) -> PeerResult:
    """:func:`solve_cpsat_v2` in a child process: ortools bundles its own HiGHS, which clashes
    with highspy once both are loaded in one process (see :mod:`gpu_engine.bench.peers`)."""
    import json
    import subprocess
    import sys

    request = {"problem": problem.to_dict(), "limit": time_limit_s, "threads": threads}
    done = subprocess.run(
        [sys.executable, "-m", "gpu_engine.bench.peers_v2"],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip()[-500:])
    data = json.loads(done.stdout)
    return PeerResult(
        data["total"],
        np.asarray(data["choice"], dtype=np.int64),
        data["optimal"],
        data["elapsed_ms"],
        data["status"],
    )


if __name__ == "__main__":
    import json
    import sys

    request = json.loads(sys.stdin.read())
    result = solve_cpsat_v2(
        CartProblem.from_dict(request["problem"]),
        time_limit_s=request["limit"],
        threads=request["threads"],
    )
    print(
        json.dumps(
            {
                "total": result.total,
                "choice": result.choice.tolist(),
                "optimal": result.optimal,
                "elapsed_ms": result.elapsed_ms,
                "status": result.status,
            }
        )
    )
