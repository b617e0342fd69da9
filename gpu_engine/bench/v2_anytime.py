"""Version 2 anytime: carts of 50-200 lines (20 merchants with 1-3 nodes, weight tiers, stock
per node, thresholds and discounts over every node) solved by the planner at 200 ms and
1000 ms, with the GPU allowed and on the CPU alone, against a reference optimum: the engine's
HiGHS program given ``--v2-anytime-reference-s`` and every thread (a reference it does not prove
is reported as such, with its bound).

Per cart and route: total, proven, wall ms, gap to the reference (percent). The summary rows
give, per route and budget: carts at the reference, carts proven, the worst gap, the worst
wall / budget, and whether any cart got dearer with the larger budget."""

from __future__ import annotations

import time
from typing import Any

from gpu_engine import CartProblem, gpu_available, solve
from gpu_engine.bench.v2_family import v2_uniform_cart

SUITE = "v2_anytime"


def add_arguments(parser) -> None:
    parser.add_argument("--v2-anytime-lines", default="50,100,150,200")
    parser.add_argument("--v2-anytime-seeds", default="0,1,2")
    parser.add_argument("--v2-anytime-budgets", default="200,1000")
    parser.add_argument("--v2-anytime-offers", type=int, default=5)
    parser.add_argument("--v2-anytime-merchants", type=int, default=20)
    parser.add_argument("--v2-anytime-reference-s", type=float, default=20.0)


def _carts(args) -> list[tuple[str, CartProblem]]:
    lines = [int(v) for v in args.v2_anytime_lines.split(",") if v]
    seeds = [int(v) for v in args.v2_anytime_seeds.split(",") if v]
    return [
        (
            f"v2 {n}x{args.v2_anytime_offers}x{args.v2_anytime_merchants}#{s}",
            CartProblem.from_dict(
                v2_uniform_cart(n, args.v2_anytime_offers, args.v2_anytime_merchants, 9000 + s)
            ),
        )
        for n in lines
        for s in seeds
    ]


def _reference(problem: CartProblem, limit_s: float) -> tuple[int, bool, float]:
    from gpu_engine.solvers.milp.runner import milp_best

    sol, outcome = milp_best(problem, budget_ms=limit_s * 1e3, threads=None)
    total = sol.total if sol is not None else -1
    return total, bool(sol is not None and sol.optimal), float(outcome.bound)


def run(args) -> list[dict[str, Any]]:
    from gpu_engine.warmup import warmup

    budgets = [float(v) for v in args.v2_anytime_budgets.split(",") if v]
    warmup(include_gpu=gpu_available())  # compiled once, outside every timed solve
    routes = [("gpu", True), ("cpu", False)] if gpu_available() else [("cpu", False)]
    rows: list[dict[str, Any]] = []
    per_route: dict[tuple[str, float], list[dict[str, Any]]] = {}
    for case, problem in _carts(args):
        ref_total, ref_proven, ref_bound = _reference(problem, args.v2_anytime_reference_s)
        previous: dict[str, int] = {}
        for route, allow_gpu in routes:
            for budget in budgets:
                t0 = time.perf_counter()
                sol = solve(problem, budget_ms=budget, allow_gpu=allow_gpu)
                wall = (time.perf_counter() - t0) * 1e3
                gap = 100.0 * (sol.total - ref_total) / ref_total if ref_total > 0 else None
                row = {
                    "suite": SUITE,
                    "case": case,
                    "route": route,
                    "budget_ms": budget,
                    "total": sol.total,
                    "proven": sol.optimal,
                    "wall_ms": round(wall, 1),
                    "gap_pct": None if gap is None else round(gap, 4),
                    "reference": ref_total,
                    "reference_proven": ref_proven,
                    "reference_bound": round(ref_bound, 1),
                    "dearer_with_more_budget": route in previous and sol.total > previous[route],
                    "algorithm": sol.algorithm,
                }
                previous[route] = sol.total
                rows.append(row)
                per_route.setdefault((route, budget), []).append(row)
    rows.extend(_summary(per_route))
    return rows


def _summary(per_route: dict[tuple[str, float], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    out = []
    for (route, budget), rows in per_route.items():
        at_ref = sum(1 for r in rows if r["total"] <= r["reference"])
        out.append(
            {
                "suite": SUITE,
                "case": "summary",
                "route": route,
                "budget_ms": budget,
                "carts": len(rows),
                "at_reference": at_ref,
                "proven": sum(1 for r in rows if r["proven"]),
                "worst_gap_pct": max((r["gap_pct"] or 0.0) for r in rows),
                "worst_wall_over_budget": round(max(r["wall_ms"] for r in rows) / budget, 3),
                "dearer_with_more_budget": sum(1 for r in rows if r["dearer_with_more_budget"]),
            }
        )
    return out
