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

from typing import Any

from gpu_engine import CartProblem
from gpu_engine.bench.ishop import against_highs, interleaved
from gpu_engine.bench.ishop_data import NAMES, load
from gpu_engine.solvers.flat.solve import solve_flat

SUITE = "flat"


def add_arguments(parser) -> None:
    parser.add_argument("--flat-repeats", type=int, default=7, help="flat: timed rounds")
    parser.add_argument(
        "--flat-names", default="", help="flat: comma-separated ISHOP-U instances (default: all)"
    )


def instance_row(name: str, problem: CartProblem, *, repeats: int) -> dict[str, Any]:
    """One instance: solve_flat's and HiGHS's median times (interleaved rounds) and answers."""
    f_ms, result, h_ms, peer = interleaved(lambda: solve_flat(problem), problem, repeats=repeats)
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


def run(args) -> list[dict[str, Any]]:
    names = [n for n in args.flat_names.split(",") if n] or list(NAMES)
    rows = [
        instance_row(name, CartProblem.from_dict(load(name)), repeats=args.flat_repeats)
        for name in names
    ]
    return [*rows, against_highs(rows, suite=SUITE, solver="flat")]
