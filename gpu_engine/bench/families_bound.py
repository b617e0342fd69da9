"""Lower bounds on the instance families: how far the LP relaxation of the exact
MILP sits below the optimum, what it costs, and how long HiGHS needs to prove an optimal answer
handed to it as a warm start (the planner's proof after the GA, when the GA is at the optimum).

Per family, cart size and cart: the reference optimum (HiGHS, one thread,
``--families-bound-reference-s``), the LP bound (:mod:`gpu_engine.bounds.lp`: its gap to the
optimum, build and solve time), then HiGHS warm-started with that optimum, with and without its
presolve, and as the planner's proof after the GA runs it (``PROOF_PRESOLVE``,
``PROOF_HEURISTICS``), under a generous hard limit
(``--families-bound-proof-ms``): the CPU time it took to prove, and how many carts it proved
within each of ``--families-bound-cpu-ms`` of CPU. CPU time is the process's (HiGHS runs one
thread, the caller waits): on a shared machine it moves far less with the load than wall time,
so the counts say what a budget would prove on an idle host of this speed (the planner's proof
after the GA gets a little under half the budget). Rows aggregate the carts of a family and
size; ``--families-bound-detail`` writes every cart.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from gpu_engine.bench.common import device_facts
from gpu_engine.bench.families import _csv, _size
from gpu_engine.bench.family_carts import FAMILIES
from gpu_engine.problem import CartProblem

SUITE = "families_bound"


def _proofs() -> dict[str, dict[str, bool]]:
    """The proofs timed per cart: HiGHS's presolve on and off (heuristics on), and the planner's
    own proof after the GA (``engine``: PROOF_PRESOLVE and PROOF_HEURISTICS)."""
    from gpu_engine.solvers.milp.runner import PROOF_HEURISTICS, PROOF_PRESOLVE

    return {
        "presolve": {"presolve": True},
        "no_presolve": {"presolve": False},
        "engine": {"presolve": PROOF_PRESOLVE, "heuristics": PROOF_HEURISTICS},
    }


def add_arguments(parser) -> None:
    parser.add_argument(
        "--families-bound-names",
        default="threshold_deep,split_punish,large_qty,mixed",
        help="families_bound: which families",
    )
    parser.add_argument("--families-bound-lines", default="50,200", help="families_bound: sizes")
    parser.add_argument("--families-bound-carts", type=int, default=4, help="families_bound")
    parser.add_argument("--families-bound-reference-s", type=float, default=20.0)
    parser.add_argument("--families-bound-proof-ms", type=float, default=10_000.0)
    parser.add_argument("--families-bound-cpu-ms", default="250,500", help="families_bound")
    parser.add_argument("--families-bound-detail", type=Path, default=None)


def run(args) -> list[dict[str, Any]]:
    records = []
    for family in _csv(args.families_bound_names, str):
        for lines in sorted({_size(family, n) for n in _csv(args.families_bound_lines)}):
            for k in range(args.families_bound_carts):
                # The seeds of the families suite: the same carts.
                problem = CartProblem.from_dict(FAMILIES[family](1000 * lines + k, lines))
                record = {"family": family, "lines": lines, "cart": k}
                records.append({**record, **_cart(problem, args)})
    if args.families_bound_detail:
        args.families_bound_detail.write_text(
            json.dumps({"device": device_facts(), "records": records}, default=str)
        )
    rows = []
    for family in _csv(args.families_bound_names, str):
        for lines in sorted({r["lines"] for r in records if r["family"] == family}):
            group = [r for r in records if r["family"] == family and r["lines"] == lines]
            rows.append(_row(family, lines, group, _csv(args.families_bound_cpu_ms, float)))
    return rows


def _cart(problem: CartProblem, args) -> dict[str, Any]:
    from gpu_engine.bounds.lp import lp_bound
    from gpu_engine.solvers.milp.runner import solve_milp

    load = os.getloadavg()[0]
    ref = solve_milp(problem, budget_ms=args.families_bound_reference_s * 1e3, threads=1)
    cpu = time.process_time()
    lp = lp_bound(problem)
    lp_cpu_ms = (time.process_time() - cpu) * 1e3
    index = {merchant: m for m, merchant in enumerate(problem.merchant_ids)}
    optimum = np.array([index[ref.assignment[item]] for item in problem.item_ids])
    proofs = {
        name: _proof(problem, optimum, ref.total, args.families_bound_proof_ms, **options)
        for name, options in _proofs().items()
    }
    return {
        "optimum": ref.total,
        "reference_proven": ref.optimal,
        "lp_bound": lp.bound,
        "lp_gap_pct": None if lp.bound is None else _gap(ref.total, lp.bound),
        "lp_build_ms": lp.build_ms,
        "lp_solve_ms": lp.ms - lp.build_ms,
        "lp_cpu_ms": lp_cpu_ms,
        "proofs": proofs,
        "load1": load,
    }


def _proof(
    problem, optimum, total: int, limit_ms: float, *, presolve: bool, heuristics: bool = True
) -> dict[str, Any]:
    from gpu_engine.solvers.milp.runner import milp_best

    cpu, wall = time.process_time(), time.perf_counter()
    solution, outcome = milp_best(
        problem,
        budget_ms=limit_ms,
        warm_start=optimum,
        threads=1,
        presolve=presolve,
        heuristics=heuristics,
    )
    proved = solution is not None and solution.optimal and solution.total <= total
    return {
        "proved": proved,
        "cpu_ms": (time.process_time() - cpu) * 1e3,
        "wall_ms": (time.perf_counter() - wall) * 1e3,
        "status": outcome.status,
        "cut": outcome.cut,
    }


def _gap(total: int, bound: int) -> float:
    return 0.0 if total == 0 else 100.0 * (total - bound) / total


def _q(values: list[float], q: float) -> float | None:
    return round(float(np.quantile(values, q)), 4) if values else None


def _row(family: str, lines: int, group: list[dict], cpu_limits: list[float]) -> dict[str, Any]:
    gaps = [r["lp_gap_pct"] for r in group if r["reference_proven"] and r["lp_gap_pct"] is not None]
    row: dict[str, Any] = {
        "suite": SUITE,
        "case": f"{family} {lines} lines",
        "carts": len(group),
        "with_proven_ref": sum(r["reference_proven"] for r in group),
        "lp_gap_pct_p50": _q(gaps, 0.5),
        "lp_gap_pct_max": round(max(gaps), 4) if gaps else None,
        "lp_proves": sum(
            r["lp_bound"] is not None and r["lp_bound"] >= r["optimum"] for r in group
        ),
        "lp_build_ms_p50": _q([r["lp_build_ms"] for r in group], 0.5),
        "lp_solve_ms_p50": _q([r["lp_solve_ms"] for r in group], 0.5),
        "lp_cpu_ms_p50": _q([r["lp_cpu_ms"] for r in group], 0.5),
    }
    for name in _proofs():
        runs = [r["proofs"][name] for r in group]
        row[f"{name}_proved"] = sum(p["proved"] for p in runs)
        for limit in cpu_limits:
            row[f"{name}_proved_cpu_{limit:g}ms"] = sum(
                p["proved"] and p["cpu_ms"] <= limit for p in runs
            )
        row[f"{name}_cpu_ms_p50"] = _q([p["cpu_ms"] for p in runs], 0.5)
        row[f"{name}_wall_ms_p50"] = _q([p["wall_ms"] for p in runs], 0.5)
    row["load1_mean"] = round(sum(r["load1"] for r in group) / len(group), 1)
    return row
