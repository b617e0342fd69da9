"""The 30 public ISHOP-U instances (Gaussian and Uniform; 10x25, 25x50, 50x100 products x
stores; a delivery fee per store, no thresholds or discounts; :mod:`gpu_engine.bench.ishop_data`)
solved by the engine's planner and by one-thread HiGHS, in the same process, interleaved.

Per instance: both solvers run once untimed (warm), then ``--ishop-repeats`` rounds of one
engine solve and one HiGHS solve, each timed around the call from the parsed problem; the
median of each. The engine is ``gpu_engine.solve(problem, algorithm="auto",
budget_ms=--ishop-budget-ms)``; HiGHS is the peer's own plain MILP
(:func:`gpu_engine.bench.peers.solve_highs`, one thread, model built inside the timing), run
in this process (the CP-SAT peer, whose HiGHS clashes with highspy, is not loaded). Interleaving
the two keeps the ratio fair on a shared machine. The last row sums up: how many engine totals
meet HiGHS's proven optimum, how many the engine proved, the median ratio engine/HiGHS and the
instances where the engine was slower.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from gpu_engine import CartProblem, solve
from gpu_engine.bench.ishop_data import NAMES, load
from gpu_engine.bench.peers import solve_highs

SUITE = "ishop"


def add_arguments(parser) -> None:
    parser.add_argument("--ishop-repeats", type=int, default=7, help="ishop: timed rounds")
    parser.add_argument("--ishop-budget-ms", type=float, default=1000.0, help="ishop: budget")
    parser.add_argument(
        "--ishop-names", default="", help="ishop: comma-separated instances (default: all 30)"
    )


def _ms(fn) -> tuple[float, Any]:
    t0 = time.perf_counter()
    result = fn()
    return (time.perf_counter() - t0) * 1e3, result


def instance_row(name: str, problem: CartProblem, *, repeats: int, budget_ms: float) -> dict:
    """One instance: the engine's and HiGHS's median times (interleaved rounds) and answers."""

    def engine():
        return solve(problem, algorithm="auto", budget_ms=budget_ms)

    def highs():
        return solve_highs(problem, threads=1)

    engine()
    highs()
    engine_ms, highs_ms = [], []
    for _ in range(repeats):
        ms, sol = _ms(engine)
        engine_ms.append(ms)
        ms, peer = _ms(highs)
        highs_ms.append(ms)
    e_ms, h_ms = statistics.median(engine_ms), statistics.median(highs_ms)
    return {
        "suite": SUITE,
        "case": name,
        "lines": problem.n_items,
        "stores": problem.n_merchants,
        "engine_ms": round(e_ms, 3),
        "engine_total": sol.total,
        "engine_proven": sol.optimal,
        "engine_method": sol.plan["method"] if sol.plan else sol.algorithm,
        "highs_ms": round(h_ms, 3),
        "highs_total": peer.total,
        "highs_proven": peer.optimal,
        "ratio": round(e_ms / h_ms, 3),
    }


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    at_optimum = [r for r in rows if r["highs_proven"] and r["engine_total"] == r["highs_total"]]
    slower = [r["case"] for r in rows if r["engine_ms"] > r["highs_ms"]]
    return {
        "suite": SUITE,
        "case": "summary",
        "instances": len(rows),
        "at_optimum": len(at_optimum),
        "engine_proven_count": sum(bool(r["engine_proven"]) for r in rows),
        "median_ratio": round(statistics.median(r["ratio"] for r in rows), 3),
        "engine_slower": len(slower),
        "slower_on": ",".join(slower),
    }


def run(args) -> list[dict[str, Any]]:
    names = [n for n in args.ishop_names.split(",") if n] or list(NAMES)
    rows = [
        instance_row(
            name,
            CartProblem.from_dict(load(name)),
            repeats=args.ishop_repeats,
            budget_ms=args.ishop_budget_ms,
        )
        for name in names
    ]
    return [*rows, summary(rows)]
