"""GA quality against the HiGHS optimum on random carts.

For each size (default 30, 50 and 100 lines; 5-20 offers a line, 100 merchants, thresholds and
discounts: :mod:`gpu_engine.planning.carts`) the same carts go to HiGHS (``highspy``, one thread
per worker process, exact: ``mip_rel_gap = 0``, a time limit), the GPU GA (100 ms budget) and the
CPU GA (500 ms budget, one process per core). The gap of a GA answer is (GA total - HiGHS
total) / HiGHS total; where HiGHS did not prove its answer in its time limit the best total any
solver found is the reference and the row says how many such carts there were.

Order, so that timings do not disturb each other: HiGHS starts in a process pool; the GPU GA
runs meanwhile in this process (its host thread keeps one core); the CPU GA pool starts once
HiGHS is done. Every worker process warms up (compiles or loads its code) before its first
timed cart. ``--ga-sweep`` adds GPU population-size variants on the first carts of the
largest size.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import statistics
import time
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from gpu_engine.bench.common import device_facts
from gpu_engine.planning.carts import random_cart
from gpu_engine.problem import CartProblem

SUITE = "ga"


def add_arguments(parser) -> None:
    parser.add_argument("--ga-sizes", default="30,50,100", help="ga: lines per cart, comma list")
    parser.add_argument("--ga-carts", type=int, default=100, help="ga: carts per size")
    parser.add_argument("--ga-gpu-budget-ms", type=float, default=100.0)
    parser.add_argument("--ga-cpu-budget-ms", type=float, default=500.0)
    parser.add_argument("--ga-highs-limit-s", type=float, default=60.0, help="ga: HiGHS limit")
    parser.add_argument("--ga-workers", type=int, default=None, help="ga: processes (cores - 2)")
    parser.add_argument("--ga-no-gpu", action="store_true", help="ga: skip the GPU GA")
    parser.add_argument("--ga-no-cpu", action="store_true", help="ga: skip the CPU GA")
    parser.add_argument("--ga-sweep", action="store_true", help="ga: GPU population variants")
    parser.add_argument("--ga-detail", type=Path, default=None, help="ga: per-cart JSON here")


def cart_seed(n_lines: int, k: int) -> int:
    return 1000 * n_lines + k


def _problem(n_lines: int, k: int) -> CartProblem:
    return CartProblem.from_dict(random_cart(cart_seed(n_lines, k), n_lines))


def _highs_job(n_lines: int, k: int, limit_ms: float) -> dict[str, Any]:
    from gpu_engine.pricing import assignment_cost
    from gpu_engine.solvers.milp.runner import milp_proves, milp_run

    problem = _problem(n_lines, k)
    t0 = time.perf_counter()
    outcome = milp_run(problem, time_limit_ms=limit_ms, threads=1)
    ms = (time.perf_counter() - t0) * 1e3
    total = None
    if outcome.choice is not None:
        total = int(
            assignment_cost(
                outcome.choice, problem.quantity, problem.price, *problem.merchant_params
            )
        )
    proven = total is not None and milp_proves(total, outcome.bound)
    return {"total": total, "proven": proven, "bound": outcome.bound, "ms": ms}


def _ga_job(n_lines: int, k: int, budget_ms: float, device: str, population: int | None = None):
    from gpu_engine.solvers.ga.solve import CPU_CONFIG, GPU_CONFIG, solve_ga

    # The CPU's own population choice unless one is asked for; one thread, since the suite
    # runs one worker process a core.
    config = None if device == "cpu" and population is None else GPU_CONFIG
    if population is not None:
        config = (GPU_CONFIG if device == "gpu" else CPU_CONFIG).with_(population=population)
    problem = _problem(n_lines, k)
    t0 = time.perf_counter()
    solution = solve_ga(
        problem, budget_ms=budget_ms, seed=0, device=device, config=config, threads=1
    )
    return {
        "total": solution.total,
        "ms": (time.perf_counter() - t0) * 1e3,
        "generations": solution.stats["generations"],
        "stop": solution.stats["stop"],
        "optimal": solution.optimal,
        "population": solution.stats["population"],
    }


def _warm_cpu_ga() -> None:
    # Every process compiles (or loads from numba's cache) once before it is timed. Without a
    # budget: one cut at a budget would load the first population's code only.
    from gpu_engine.solvers.ga.solve import solve_ga

    solve_ga(_problem(5, 0), seed=0, device="cpu", threads=1)


def _warm_highs() -> None:
    _highs_job(3, 0, 1000.0)


def _quantile(values: list[float], q: float) -> float | None:
    return float(np.quantile(values, q)) if values else None


def _gap_row(size: int, solver: str, budget: float, records: list[dict], key: str) -> dict:
    gaps = [r["gap_" + key] for r in records if r.get("gap_" + key) is not None]
    times = [r[key]["ms"] for r in records if key in r]
    return {
        "suite": SUITE,
        "case": f"{size} lines",
        "solver": solver,
        "budget_ms": budget,
        "carts": len(gaps),
        "within_0.1%": round(float(np.mean(np.array(gaps) <= 0.1)), 3) if gaps else None,
        "within_1%": round(float(np.mean(np.array(gaps) <= 1.0)), 3) if gaps else None,
        "equal": round(float(np.mean(np.array(gaps) <= 0.0)), 3) if gaps else None,
        "gap_p50_%": _quantile(gaps, 0.5),
        "gap_p95_%": _quantile(gaps, 0.95),
        "gap_max_%": max(gaps) if gaps else None,
        "median_ms": statistics.median(times) if times else None,
        "max_ms": max(times) if times else None,
    }


def _highs_row(size: int, records: list[dict], limit_s: float) -> dict:
    times = [r["highs"]["ms"] for r in records]
    return {
        "suite": SUITE,
        "case": f"{size} lines",
        "solver": "highs (1 thread)",
        "budget_ms": limit_s * 1e3,
        "carts": len(records),
        "proven": sum(bool(r["highs"]["proven"]) for r in records),
        "median_ms": statistics.median(times),
        "p90_ms": _quantile(times, 0.9),
        "max_ms": max(times),
    }


def _score(records: list[dict], keys: list[str]) -> None:
    """Gap of each GA answer, in %, to HiGHS's proven total (or the best total found)."""
    for r in records:
        found = [r[k]["total"] for k in ["highs", *keys] if k in r and r[k]["total"] is not None]
        reference = r["highs"]["total"] if r["highs"]["proven"] else min(found)
        r["reference"] = reference
        for k in keys:
            if k in r:
                r["gap_" + k] = 100.0 * (r[k]["total"] - reference) / reference


def _sweep(size: int, carts: int, budget: float) -> list[dict]:
    rows = []
    for population in (4096, 16384, 32768):
        results = [_ga_job(size, k, budget, "gpu", population) for k in range(carts)]
        rows.append({"population": population, "results": results})
    return rows


def run(args) -> list[dict[str, Any]]:
    from gpu_engine.device import gpu_available

    sizes = [int(s) for s in str(args.ga_sizes).split(",") if s]
    workers = args.ga_workers or max(1, (os.cpu_count() or 2) - 2)
    limit_ms = args.ga_highs_limit_s * 1e3
    use_gpu = gpu_available() and not args.ga_no_gpu
    records = {n: [{"seed": cart_seed(n, k)} for k in range(args.ga_carts)] for n in sizes}
    started = time.perf_counter()
    # Spawned workers: this process opens a CUDA context, which forked children must not share.
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=spawn, initializer=_warm_highs) as pool:
        highs: dict[tuple[int, int], Future] = {
            (n, k): pool.submit(_highs_job, n, k, limit_ms)
            for n in sizes
            for k in range(args.ga_carts)
        }
        if use_gpu:
            _ga_job(5, 0, 20.0, "gpu")  # compile or load the kernels
            for n in sizes:
                for k, r in enumerate(records[n]):
                    r["gpu"] = _ga_job(n, k, args.ga_gpu_budget_ms, "gpu")
        for (n, k), future in highs.items():
            records[n][k]["highs"] = future.result()
    highs_wall_s = time.perf_counter() - started
    if not args.ga_no_cpu:
        _warm_cpu_ga()
        with ProcessPoolExecutor(workers, mp_context=spawn, initializer=_warm_cpu_ga) as pool:
            cpu = {
                (n, k): pool.submit(_ga_job, n, k, args.ga_cpu_budget_ms, "cpu")
                for n in sizes
                for k in range(args.ga_carts)
            }
            for (n, k), future in cpu.items():
                records[n][k]["cpu"] = future.result()
    keys = [k for k in ("gpu", "cpu") if any(k in r for rs in records.values() for r in rs)]
    rows = []
    for n in sizes:
        _score(records[n], keys)
        rows.append(_highs_row(n, records[n], args.ga_highs_limit_s))
        if "gpu" in keys:
            rows.append(_gap_row(n, "gpu-ga", args.ga_gpu_budget_ms, records[n], "gpu"))
        if "cpu" in keys:
            rows.append(_gap_row(n, "cpu-ga (1 core)", args.ga_cpu_budget_ms, records[n], "cpu"))
    sweep = (
        _sweep(sizes[-1], min(20, args.ga_carts), args.ga_gpu_budget_ms)
        if (use_gpu and args.ga_sweep)
        else []
    )
    for variant in sweep:
        ref = [r["reference"] for r in records[sizes[-1]][: len(variant["results"])]]
        gaps = [100.0 * (v["total"] - f) / f for v, f in zip(variant["results"], ref, strict=True)]
        rows.append(
            {
                "suite": SUITE,
                "case": f"{sizes[-1]} lines, sweep",
                "solver": f"gpu-ga P={variant['population']}",
                "budget_ms": args.ga_gpu_budget_ms,
                "carts": len(gaps),
                "within_0.1%": round(float(np.mean(np.array(gaps) <= 0.1)), 3),
                "gap_p95_%": _quantile(gaps, 0.95),
                "median_ms": statistics.median(v["ms"] for v in variant["results"]),
                "generations": statistics.median(v["generations"] for v in variant["results"]),
            }
        )
    if args.ga_detail:
        args.ga_detail.write_text(
            json.dumps(
                {
                    "device": device_facts(),
                    "workers": workers,
                    "highs_phase_wall_s": highs_wall_s,
                    "records": records,
                    "sweep": sweep,
                },
                default=float,
            )
        )
    return rows
