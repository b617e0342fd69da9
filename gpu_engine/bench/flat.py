"""The flat-cart solver (:func:`gpu_engine.solvers.flat.solve.solve_flat`) against one-thread
HiGHS on the 30 public ISHOP-U instances, in the same process, interleaved.

Per instance: both run once untimed (numba's compiled code loaded, HiGHS warm), then
``--flat-repeats`` rounds of one solve_flat and one HiGHS solve, each timed around the call from
the parsed problem; the median of each. HiGHS is the peer's plain MILP
(:func:`gpu_engine.bench.peers.solve_highs`, one thread, model built inside the timing). The
last row sums up: how many totals meet HiGHS's proven optimum, how many solve_flat proved, the
median ratio flat/HiGHS and the instances where solve_flat was slower.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from gpu_engine import CartProblem
from gpu_engine.bench.ishop_data import NAMES, load
from gpu_engine.bench.peers import solve_highs
from gpu_engine.solvers.flat.solve import solve_flat

SUITE = "flat"


def add_arguments(parser) -> None:
    parser.add_argument("--flat-repeats", type=int, default=7, help="flat: timed rounds")
    parser.add_argument(
        "--flat-names", default="", help="flat: comma-separated ISHOP-U instances (default: all)"
    )


def instance_row(name: str, problem: CartProblem, *, repeats: int) -> dict[str, Any]:
    """One instance: solve_flat's and HiGHS's median times (interleaved rounds) and answers."""
    solve_flat(problem)
    solve_highs(problem, threads=1)
    flat_ms, highs_ms = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = solve_flat(problem)
        flat_ms.append((time.perf_counter() - t0) * 1e3)
        t0 = time.perf_counter()
        peer = solve_highs(problem, threads=1)
        highs_ms.append((time.perf_counter() - t0) * 1e3)
    f_ms, h_ms = statistics.median(flat_ms), statistics.median(highs_ms)
    return {
        "suite": SUITE,
        "case": name,
        "lines": problem.n_items,
        "stores": problem.n_merchants,
        "flat_ms": round(f_ms, 3),
        "flat_total": result.total,
        "flat_bound": result.bound,
        "flat_proven": result.optimal,
        "nodes": result.stats["nodes"],
        "highs_ms": round(h_ms, 3),
        "highs_total": peer.total,
        "highs_proven": peer.optimal,
        "ratio": round(f_ms / h_ms, 4),
    }


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    at_optimum = [r for r in rows if r["highs_proven"] and r["flat_total"] == r["highs_total"]]
    slower = [r["case"] for r in rows if r["flat_ms"] > r["highs_ms"]]
    return {
        "suite": SUITE,
        "case": "summary",
        "instances": len(rows),
        "at_optimum": len(at_optimum),
        "flat_proven_count": sum(bool(r["flat_proven"]) for r in rows),
        "median_ratio": round(statistics.median(r["ratio"] for r in rows), 4),
        "max_ratio": round(max(r["ratio"] for r in rows), 4),
        "flat_slower": len(slower),
        "slower_on": ",".join(slower),
    }


def run(args) -> list[dict[str, Any]]:
    names = [n for n in args.flat_names.split(",") if n] or list(NAMES)
    rows = [
        instance_row(name, CartProblem.from_dict(load(name)), repeats=args.flat_repeats)
        for name in names
    ]
    return [*rows, summary(rows)]
