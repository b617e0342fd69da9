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
from collections.abc import Callable
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


def interleaved(solver: Callable[[], Any], problem: CartProblem, *, repeats: int):
    """``(solver's median ms, its answer, HiGHS's median ms, HiGHS's answer)`` over ``repeats``
    interleaved rounds, after one untimed run of each (warm)."""
    solver()
    solve_highs(problem, threads=1)
    solver_ms, highs_ms = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        answer = solver()
        solver_ms.append((time.perf_counter() - t0) * 1e3)
        t0 = time.perf_counter()
        peer = solve_highs(problem, threads=1)
        highs_ms.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(solver_ms), answer, statistics.median(highs_ms), peer


def instance_row(name: str, problem: CartProblem, *, repeats: int, budget_ms: float) -> dict:
    """One instance: the engine's and HiGHS's median times (interleaved rounds) and answers."""
    e_ms, sol, h_ms, peer = interleaved(
        lambda: solve(problem, algorithm="auto", budget_ms=budget_ms), problem, repeats=repeats
    )
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


def against_highs(rows: list[dict[str, Any]], *, suite: str, solver: str) -> dict[str, Any]:
    """The summary row of ``rows`` whose ``{solver}_ms/_total/_proven`` met HiGHS's."""
    at_optimum = [r for r in rows if r["highs_proven"] and r[f"{solver}_total"] == r["highs_total"]]
    slower = [r["case"] for r in rows if r[f"{solver}_ms"] > r["highs_ms"]]
    return {
        "suite": suite,
        "case": "summary",
        "instances": len(rows),
        "at_optimum": len(at_optimum),
        f"{solver}_proven_count": sum(bool(r[f"{solver}_proven"]) for r in rows),
        "median_ratio": round(statistics.median(r["ratio"] for r in rows), 4),
        "max_ratio": round(max(r["ratio"] for r in rows), 4),
        f"{solver}_slower": len(slower),
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
    return [*rows, against_highs(rows, suite=SUITE, solver="engine")]
