"""The planner on the instance families of :mod:`gpu_engine.bench.family_carts`.

Per family, cart size and budget: the gap of the planner's answer to a proven optimum
(HiGHS, one thread, ``--families-reference-s``) at p50/p95/max, the share of answers the engine
proved, the wall time over the budget (p50/max, planning included), how many carts got a worse
total at a larger budget (same seed; must be 0), and which routes ran. For the fixed-fee family
(the internet-shopping-problem shape) it also reports the planner's median time against plain
HiGHS (one thread) on the same carts in the same run: the reference solve is that HiGHS run.

``--families-cpu`` keeps the planner off the GPU (the CPU path). Everything runs in this one
process, one solve at a time, so the timings are the planner's alone (the machine's load average
is reported with them).
"""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from gpu_engine.bench.common import device_facts
from gpu_engine.bench.family_carts import FAMILIES
from gpu_engine.problem import CartProblem

SUITE = "families"


def add_arguments(parser) -> None:
    parser.add_argument("--families-names", default=",".join(FAMILIES), help="families: which")
    parser.add_argument("--families-lines", default="50,200", help="families: cart sizes")
    parser.add_argument("--families-carts", type=int, default=5, help="families: carts per size")
    parser.add_argument("--families-budget-ms", default="200,1000", help="families: budgets")
    parser.add_argument("--families-reference-s", type=float, default=60.0)
    parser.add_argument("--families-cpu", action="store_true", help="families: no GPU")
    parser.add_argument("--families-seed", type=int, default=0, help="families: solve seed")
    parser.add_argument("--families-detail", type=Path, default=None, help="families: JSON here")
    parser.add_argument(
        "--families-proof-presolve",
        choices=("engine", "on", "off"),
        default="engine",
        help="families: HiGHS's presolve in the proof after the GA (engine: PROOF_PRESOLVE)",
    )
    parser.add_argument(
        "--families-lns",
        choices=("engine", "off"),
        default="engine",
        help="families: the neighbourhood step after the GA (off: an A/B in one invocation)",
    )


def _csv(text: str, kind=int) -> list:
    return [kind(v) for v in str(text).split(",") if v]


def run(args) -> list[dict[str, Any]]:
    from gpu_engine import solve, warmup
    from gpu_engine.planning import tuning
    from gpu_engine.solvers.milp import runner

    warmup()
    if args.families_proof_presolve != "engine":
        # An A/B of the engine's setting in one run (the planner reads it per proof).
        runner.PROOF_PRESOLVE = args.families_proof_presolve == "on"
    if args.families_lns == "off":
        # No cart is large enough for the step: the planner before it, for an A/B.
        tuning.LNS_MIN_LINES = 10**9
    budgets = sorted(_csv(args.families_budget_ms, float))
    records = []
    for family in _csv(args.families_names, str):
        sizes = sorted({_size(family, n) for n in _csv(args.families_lines)})
        for lines in sizes:
            for k in range(args.families_carts):
                problem = CartProblem.from_dict(FAMILIES[family](1000 * lines + k, lines))
                records.append(_record(family, lines, k, problem, budgets, args, solve))
    if args.families_detail:
        args.families_detail.write_text(
            json.dumps({"device": device_facts(), "records": records}, default=str)
        )
    rows = []
    for family in _csv(args.families_names, str):
        for lines in sorted({r["lines"] for r in records if r["family"] == family}):
            group = [r for r in records if r["family"] == family and r["lines"] == lines]
            rows.extend(_rows(family, lines, group, budgets))
    return rows


def _size(family: str, lines: int) -> int:
    return min(max(lines, 25), 50) if family == "fixed_fee" else lines


def _record(family, lines, k, problem: CartProblem, budgets, args, solve) -> dict[str, Any]:
    from gpu_engine.solvers.milp.runner import solve_milp

    record: dict[str, Any] = {"family": family, "lines": lines, "cart": k, "runs": {}}
    for budget in budgets:
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        solution = solve(
            problem, budget_ms=budget, seed=args.families_seed, allow_gpu=not args.families_cpu
        )
        wall = (time.perf_counter() - t0) * 1e3
        record["runs"][str(budget)] = {
            "total": solution.total,
            "optimal": solution.optimal,
            "wall_ms": wall,
            "load1": load,
            "method": solution.plan["method"],
            "order": solution.plan.get("order"),
            # The phases that ran (a skipped one stays in the plan with its reason).
            "ran": [p.get("phase") for p in solution.plan.get("ran") or [] if "skipped" not in p],
        }
    t0 = time.perf_counter()
    ref = solve_milp(problem, budget_ms=args.families_reference_s * 1e3, threads=1)
    record["reference"] = {
        "total": ref.total,
        "proven": ref.optimal,
        "ms": (time.perf_counter() - t0) * 1e3,
    }
    return record


def _gap(total: int, ref: int) -> float:
    if ref == 0:
        return 0.0 if total == 0 else float("inf")
    return 100.0 * (total - ref) / ref


def _q(values: list[float], q: float) -> float | None:
    return round(float(np.quantile(values, q)), 4) if values else None


def _rows(family: str, lines: int, group: list[dict], budgets: list[float]) -> list[dict]:
    rows = []
    refs = [r for r in group if r["reference"]["proven"]]
    for budget in budgets:
        key = str(budget)
        gaps = [_gap(r["runs"][key]["total"], r["reference"]["total"]) for r in refs]
        ratios = [r["runs"][key]["wall_ms"] / budget for r in group]
        routes: dict[str, int] = {}
        for r in group:
            route = "+".join(r["runs"][key]["ran"]) or r["runs"][key]["method"]
            routes[route] = routes.get(route, 0) + 1
        row: dict[str, Any] = {
            "suite": SUITE,
            "case": f"{family} {lines} lines",
            "budget_ms": budget,
            "carts": len(group),
            "with_proven_ref": len(refs),
            "gap_pct_p50": _q(gaps, 0.5),
            "gap_pct_p95": _q(gaps, 0.95),
            "gap_pct_max": round(max(gaps), 4) if gaps else None,
            "at_optimum": sum(g == 0 for g in gaps),
            "proven_share": round(sum(r["runs"][key]["optimal"] for r in group) / len(group), 3),
            "wall_over_budget_p50": _q(ratios, 0.5),
            "wall_over_budget_max": round(max(ratios), 3),
            "load1_mean": round(statistics.mean(r["runs"][key]["load1"] for r in group), 1),
            "routes": routes,
        }
        if budget != budgets[0]:
            smaller = str(budgets[budgets.index(budget) - 1])
            row["worse_than_smaller_budget"] = sum(
                r["runs"][key]["total"] > r["runs"][smaller]["total"] for r in group
            )
        if family == "fixed_fee":
            highs = [r["reference"]["ms"] for r in group if r["reference"]["proven"]]
            row["planner_median_ms"] = round(
                statistics.median(r["runs"][key]["wall_ms"] for r in group), 1
            )
            row["highs_1thread_median_ms"] = round(statistics.median(highs), 1) if highs else None
        rows.append(row)
    return rows
