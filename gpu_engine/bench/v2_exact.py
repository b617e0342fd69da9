"""Version 2 exact: 20 lines x 10 offers x 60 merchants with 1-3 nodes each (weight tiers,
stock per node, thresholds and discounts over every node of a merchant), solved exactly by the
engine's DP (on the GPU where one is present), with one-thread HiGHS (the engine's own v2
program) and one-thread CP-SAT (an independent model, :mod:`gpu_engine.bench.peers_v2`) on the
same carts in the same run. Every total is re-priced by the engine's pricing."""

from __future__ import annotations

import functools
from typing import Any

from gpu_engine import CartProblem, gpu_available, solve
from gpu_engine.bench.common import time_ms
from gpu_engine.bench.v2_family import v2_uniform_cart

SUITE = "v2_exact"


def add_arguments(parser) -> None:
    parser.add_argument("--v2-exact-shape", default="20x10x60", help="LINESxOFFERSxMERCHANTS")
    parser.add_argument("--v2-exact-carts", type=int, default=5)
    parser.add_argument("--v2-exact-repeats", type=int, default=3)
    parser.add_argument("--v2-exact-max-nodes", type=int, default=3)
    parser.add_argument("--v2-exact-no-peers", action="store_true")
    parser.add_argument("--v2-exact-peer-limit-s", type=float, default=120.0)


def run(args) -> list[dict[str, Any]]:
    lines, offers, merchants = (int(v) for v in args.v2_exact_shape.lower().split("x"))
    algorithm = "gpu-dp" if gpu_available() else "cpu-dp"
    rows = []
    for seed in range(args.v2_exact_carts):
        cart = v2_uniform_cart(lines, offers, merchants, 500 + seed, args.v2_exact_max_nodes)
        problem = CartProblem.from_dict(cart)
        case = f"v2 {args.v2_exact_shape}#{seed}"
        median, times, sol = time_ms(
            functools.partial(solve, problem, algorithm=algorithm),
            repeats=args.v2_exact_repeats,
        )
        row: dict[str, Any] = {
            "suite": SUITE,
            "case": case,
            "solver": algorithm,
            "device": sol.device,
            "median_ms": round(median, 2),
            "min_ms": round(min(times), 2),
            "total": sol.total,
            "optimal": sol.optimal,
            "columns": problem.n_merchants,
        }
        if not args.v2_exact_no_peers:
            row.update(_peers(problem, sol.total, median, args.v2_exact_peer_limit_s))
        rows.append(row)
    return rows


def _peers(problem: CartProblem, total: int, engine_ms: float, limit_s: float) -> dict[str, Any]:
    from gpu_engine.bench.peers_v2 import run_cpsat_v2
    from gpu_engine.solvers.milp.runner import solve_milp

    out: dict[str, Any] = {}
    try:
        cp = run_cpsat_v2(problem, time_limit_s=limit_s, threads=1)
        out.update(
            cpsat_ms=round(cp.elapsed_ms, 1),
            cpsat_proven=cp.optimal,
            cpsat_agrees=cp.total == total,
            cpsat_over_engine=round(cp.elapsed_ms / engine_ms, 1),
        )
    except (ImportError, RuntimeError) as exc:
        out["cpsat_error"] = f"{type(exc).__name__}: {exc}"
    highs = solve_milp(problem, budget_ms=limit_s * 1e3, threads=1)
    out.update(
        highs_ms=round(highs.elapsed_ms, 1),
        highs_proven=highs.optimal,
        highs_agrees=highs.total == total,
    )
    return out
