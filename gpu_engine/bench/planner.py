"""The planner on a mixed set of carts: does it keep its budget, and is it exact when it can be?

200 carts (``--planner-carts``) of 1 to 100 lines (log-uniform, so small carts are common), in
three kinds: dense carts with thresholds and discounts (5-20 offers a line, 100 merchants),
sparse ones (1-6 offers, 5-60 merchants, rules on or off) and flat ones (2-10 offers, no
thresholds or discounts). Each goes through ``gpu_engine.solve(problem, budget_ms=B)``, timed
end to end (planning included) after a warm-up.

An oracle then asks, per cart, whether some exact method *does* finish within B: the CPU full
search and the HiGHS MILP run with B as their limit (one thread, in worker processes); the DPs
and the GPU methods run where the planner's own prediction is within 10 x B (beyond that they
are taken not to fit). Reported: carts over 1.1 x B, the worst time / B, and among the carts an
exact method fits, how many the planner answered with a proven optimum. Every answer the planner
did not prove is then checked against a reference: HiGHS on one thread with a long limit
(``--planner-reference-s``), reporting the gaps to the references it proved.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from gpu_engine.bench.common import device_facts
from gpu_engine.planning.carts import random_cart
from gpu_engine.problem import CartProblem

SUITE = "planner"
# The oracle runs a slow-predicted exact method only within this factor of the budget.
ORACLE_REACH = 10.0


def add_arguments(parser) -> None:
    parser.add_argument("--planner-carts", type=int, default=200)
    parser.add_argument(
        "--planner-budget-ms", default="200", help="planner: budget(s) in ms, comma list"
    )
    parser.add_argument("--planner-workers", type=int, default=None)
    parser.add_argument("--planner-detail", type=Path, default=None, help="planner: JSON here")
    parser.add_argument(
        "--planner-reference-s",
        type=float,
        default=20.0,
        help="planner: HiGHS limit for the reference optimum of unproven answers (0: none)",
    )


def mixed_cart(k: int) -> dict[str, Any]:
    rng = np.random.default_rng(5000 + k)
    n_lines = max(1, min(100, round(math.exp(rng.uniform(0.0, math.log(100.0))))))
    seed = 50_000 + k
    kind = k % 3
    if kind == 0:
        return random_cart(seed, n_lines)
    if kind == 1:
        rules = bool(rng.random() < 0.5)
        return random_cart(
            seed,
            n_lines,
            n_merchants=int(rng.integers(5, 61)),
            offers=(1, 6),
            thresholds=rules,
            discounts=rules,
        )
    return random_cart(seed, n_lines, offers=(2, 10), thresholds=False, discounts=False)


def _timed(fn) -> tuple[Any, float]:
    t0 = time.perf_counter()
    result = fn()
    return result, (time.perf_counter() - t0) * 1e3


def _warm_worker() -> None:
    """Compile (or load) every CPU method once, so the oracle times solves, not start-up."""
    for k in range(3):
        _oracle_cpu(k, 50.0)


def _oracle_cpu(k: int, budget_ms: float) -> dict[str, Any]:
    """Which CPU exact methods finish within the budget (ms when they do, None otherwise)."""
    from gpu_engine.planning import GpuState, make_plan
    from gpu_engine.planning.profile import load_profile
    from gpu_engine.solvers.dp.solve import solve_dp
    from gpu_engine.solvers.full.cpu import solve_cpu_full
    from gpu_engine.solvers.milp.runner import solve_milp

    problem = CartProblem.from_dict(mixed_cart(k))
    plan = make_plan(problem, budget_ms=budget_ms, profile=load_profile(), gpu=GpuState(False))
    predicted = {e.method: e.predicted_ms for e in plan.estimates}
    out: dict[str, Any] = {}
    runs = {
        "cpu-full": lambda: solve_cpu_full(problem, budget_ms=budget_ms),
        "cpu-dp": lambda: solve_dp(problem, device="cpu"),
        "milp": lambda: solve_milp(problem, budget_ms=budget_ms, threads=1),
    }
    for method, fn in runs.items():
        reach = math.inf if method in ("cpu-full", "milp") else ORACLE_REACH * budget_ms
        method_ms = predicted.get(method)
        if method_ms is None or method_ms > reach:
            out[method] = None
            continue
        try:
            solution, ms = _timed(fn)
        except RuntimeError:  # the MILP's deadline passed before HiGHS had any assignment
            out[method] = None
            continue
        out[method] = ms if solution.optimal and ms <= budget_ms else None
    return out


def _reference(k: int, limit_s: float) -> dict[str, Any]:
    """The optimum to measure an unproven answer against (HiGHS, one thread, long limit)."""
    from gpu_engine.solvers.milp.runner import solve_milp

    solution, ms = _timed(
        lambda: solve_milp(CartProblem.from_dict(mixed_cart(k)), budget_ms=limit_s * 1e3, threads=1)
    )
    return {"total": solution.total, "proven": solution.optimal, "ms": ms}


def _oracle_gpu(problem: CartProblem, budget_ms: float, predicted: dict) -> dict[str, Any]:
    from gpu_engine.solvers.dp.solve import solve_dp
    from gpu_engine.solvers.full.cuda import solve_gpu_full

    out: dict[str, Any] = {}
    runs = {
        "gpu-full": lambda: solve_gpu_full(problem, budget_ms=budget_ms),
        "gpu-dp": lambda: solve_dp(problem, device="gpu"),
    }
    for method, fn in runs.items():
        if predicted.get(method) is None or predicted[method] > ORACLE_REACH * budget_ms:
            out[method] = None
            continue
        try:
            solution, ms = _timed(fn)
        except Exception as exc:  # a capacity refusal means "does not fit", not a crash
            out[method] = None
            out[method + "_error"] = f"{type(exc).__name__}: {exc}"
            continue
        out[method] = ms if solution.optimal and ms <= budget_ms else None
    return out


def run(args) -> list[dict[str, Any]]:
    from gpu_engine import solve, warmup

    budgets = [float(b) for b in str(args.planner_budget_ms).split(",") if b]
    workers = args.planner_workers or max(1, (os.cpu_count() or 2) - 2)
    warmup()
    for k in range(3):
        solve(CartProblem.from_dict(mixed_cart(k)), budget_ms=budgets[0])
    rows, details = [], {}
    for budget in budgets:
        records = _run_budget(args.planner_carts, budget, workers, solve, args.planner_reference_s)
        details[str(budget)] = records
        rows.append(_summary(records, budget))
    if args.planner_detail:
        args.planner_detail.write_text(json.dumps({"device": device_facts(), "budgets": details}))
    return rows


def _run_budget(
    n_carts: int, budget: float, workers: int, solve, reference_s: float
) -> list[dict[str, Any]]:
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=spawn, initializer=_warm_worker) as pool:
        oracle = list(pool.map(_oracle_cpu, range(n_carts), [budget] * n_carts))
        # The planner runs alone in its process: the pool is idle until the references.
        records = _planner_records(n_carts, budget, solve, oracle)
        unproven = [r for r in records if not r["optimal"]] if reference_s > 0 else []
        refs = pool.map(_reference, [r["cart"] for r in unproven], [reference_s] * len(unproven))
        for record, ref in zip(unproven, refs, strict=True):
            record["reference"] = ref
    return records


def _planner_records(n_carts: int, budget: float, solve, oracle: list) -> list[dict[str, Any]]:
    from gpu_engine.device import gpu_available

    records = []
    for k in range(n_carts):
        problem = CartProblem.from_dict(mixed_cart(k))
        solution, wall_ms = _timed(lambda p=problem: solve(p, budget_ms=budget))
        record = {
            "cart": k,
            "lines": problem.n_items,
            "log10_complexity": math.log10(problem.complexity),
            "method": solution.plan["method"],
            "reason": solution.plan["reason"],
            "algorithm": solution.algorithm,
            "optimal": solution.optimal,
            "total": solution.total,
            "wall_ms": wall_ms,
            "predicted_ms": solution.plan["predicted_ms"],
            "fallback": solution.plan.get("fallback"),
            "proof": solution.plan.get("proof_after_ga"),
            "oracle": dict(oracle[k]),
        }
        if gpu_available():
            record["oracle"].update(_oracle_gpu(problem, budget, solution.plan["predicted_ms"]))
        fits = {m: ms for m, ms in record["oracle"].items() if isinstance(ms, float)}
        record["exact_fits"] = bool(fits)
        record["fastest_exact_ms"] = min(fits.values()) if fits else None
        records.append(record)
    return records


def _summary(records: list[dict[str, Any]], budget: float) -> dict[str, Any]:
    walls = np.array([r["wall_ms"] for r in records])
    fit = [r for r in records if r["exact_fits"]]
    missed = [r["cart"] for r in fit if not r["optimal"]]
    methods: dict[str, int] = {}
    for r in records:
        methods[r["method"]] = methods.get(r["method"], 0) + 1
    return {
        "suite": SUITE,
        "case": f"{len(records)} mixed carts, 1-100 lines",
        "budget_ms": budget,
        "over_1.1x_budget": int(np.sum(walls > 1.1 * budget)),
        "max_wall_over_budget": round(float(walls.max() / budget), 3),
        "p95_wall_ms": round(float(np.quantile(walls, 0.95)), 1),
        "exact_fits": len(fit),
        "exact_answered": len(fit) - len(missed),
        "missed_carts": missed[:20],
        "optimal_total": sum(bool(r["optimal"]) for r in records),
        "proven_after_ga": sum(
            r["algorithm"] == "milp" and r["method"].endswith("-ga") for r in records
        ),
        # Proofs after a GA that the deadline cut (HiGHS still building or solving at B).
        "proofs_cut": sum(bool((r.get("proof") or {}).get("cut")) for r in records),
        "methods": methods,
        **_quality(records),
    }


def _quality(records: list[dict[str, Any]]) -> dict[str, Any]:
    """How far the unproven answers are from the proven references (percent of the optimum)."""
    unproven = [r for r in records if not r["optimal"]]
    checked = [r for r in unproven if (r.get("reference") or {}).get("proven")]
    gaps = [
        100.0 * (r["total"] - r["reference"]["total"]) / r["reference"]["total"] for r in checked
    ]
    return {
        "unproven": len(unproven),
        "unproven_with_reference": len(checked),
        "gap_pct_p50": round(float(np.median(gaps)), 4) if gaps else None,
        "gap_pct_max": round(max(gaps), 4) if gaps else None,
        "at_reference": sum(g == 0 for g in gaps),
    }
