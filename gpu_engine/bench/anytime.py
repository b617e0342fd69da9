"""Anytime: does the engine use its whole budget, and prove what one-thread HiGHS does?

Per cart of :mod:`gpu_engine.bench.anytime_carts` (``--anytime-families``, seeds
``--anytime-seeds``): ``gpu_engine.solve`` (algorithm "auto") with ``--anytime-budget-ms``,
timed end to end after a warm-up, then the one-thread HiGHS peer
(:func:`gpu_engine.bench.peers.solve_highs`, its own model built inside its time, in the same
process right after the engine's run of the same cart, never beside it: on a shared machine the
load then changes little between the two) with the budget as its time limit. A row per cart: the
engine's wall ms, proven, total and route (the phases of ``plan["ran"]``); the peer's ms,
proven and total. The last row sums up: the carts the peer proves that the engine does not,
the worst wall / budget, and the budget the engine left unused on answers it did not prove.
On carts past HiGHS's trusted range (``big_money``) the peer's claim is not counted.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from gpu_engine.bench.anytime_carts import FAMILIES, family_cart
from gpu_engine.bench.common import device_facts
from gpu_engine.problem import CartProblem

SUITE = "anytime"


def add_arguments(parser) -> None:
    parser.add_argument("--anytime-budget-ms", type=float, default=10_000.0, help="anytime")
    parser.add_argument(
        "--anytime-families",
        default="barely_free,one_cent,lines200",
        help=f"anytime: comma list of {sorted(FAMILIES)}",
    )
    parser.add_argument("--anytime-seeds", default="0,1,2", help="anytime: comma list")
    parser.add_argument("--anytime-no-peer", action="store_true", help="anytime: engine only")
    parser.add_argument("--anytime-detail", type=Path, default=None, help="anytime: JSON here")


def _cases(args) -> list[tuple[str, CartProblem]]:
    seeds = [int(s) for s in str(args.anytime_seeds).split(",") if s]
    families = [f for f in str(args.anytime_families).split(",") if f]
    return [
        (f"{family}:{seed}", CartProblem.from_dict(family_cart(family, seed)))
        for family in families
        for seed in seeds
    ]


def _engine(problem: CartProblem, budget_ms: float) -> dict[str, Any]:
    from gpu_engine import solve

    t0 = time.perf_counter()
    solution = solve(problem, budget_ms=budget_ms)
    wall = (time.perf_counter() - t0) * 1e3
    plan = solution.plan or {}
    ran = plan.get("ran", [])
    return {
        "engine_ms": round(wall, 1),
        "engine_proven": solution.optimal,
        "engine_total": solution.total,
        "route": plan.get("order"),
        "phases": " ".join(_phase_word(p) for p in ran),
        "ran": ran,
    }


def _phase_word(phase: dict[str, Any]) -> str:
    """``name:ms`` (``name:-`` skipped, ``!`` a failed HiGHS run) for the table."""
    if "skipped" in phase:
        return f"{phase['phase']}:-"
    mark = "!" if phase.get("failed") else ""
    return f"{phase['phase']}{mark}:{phase.get('ms', 0):.0f}"


def _peer(problem: CartProblem, budget_ms: float) -> dict[str, Any]:
    from gpu_engine.bench.peers import solve_highs

    result = solve_highs(problem, time_limit_s=budget_ms / 1e3, threads=1)
    return {
        "peer_ms": round(result.elapsed_ms, 1),
        "peer_proven": result.optimal,
        "peer_total": result.total,
    }


def run(args) -> list[dict[str, Any]]:
    from gpu_engine import warmup
    from gpu_engine.solvers.milp.model import highs_trusted

    budget = float(args.anytime_budget_ms)
    cases = _cases(args)
    warmup()
    rows = []
    for name, problem in cases:
        row = {"suite": SUITE, "case": name, "lines": problem.n_items, "budget_ms": budget}
        row.update(_engine(problem, budget))
        if not args.anytime_no_peer:
            row.update(_peer(problem, budget))
        row["peer_trusted"] = highs_trusted(problem)
        rows.append(row)
    if args.anytime_detail:
        args.anytime_detail.write_text(
            json.dumps({"device": device_facts(), "rows": rows}, default=str)
        )
    for row in rows:
        del row["ran"]
    return [*rows, _summary(rows, budget)]


def _summary(rows: list[dict[str, Any]], budget: float) -> dict[str, Any]:
    compared = [r for r in rows if r["peer_trusted"] and "peer_proven" in r]
    missed = [r["case"] for r in compared if r["peer_proven"] and not r["engine_proven"]]
    unproven = [r for r in rows if not r["engine_proven"]]
    return {
        "suite": SUITE,
        "case": f"summary of {len(rows)} carts",
        "budget_ms": budget,
        "engine_proven": sum(bool(r["engine_proven"]) for r in rows),
        "peer_proven": sum(bool(r["peer_proven"]) for r in compared),
        "peer_proves_engine_not": " ".join(missed) or "none",
        "engine_worse_total": sum(
            r["engine_total"] > r["peer_total"] for r in compared if r.get("peer_total") is not None
        ),
        "wall_over_budget_max": round(max(r["engine_ms"] for r in rows) / budget, 4),
        # Budget left unused on answers not proven: the engine should have kept working.
        "unused_ms_unproven_max": round(
            max((budget - r["engine_ms"] for r in unproven), default=0), 1
        ),
    }
