"""Cross-check of the GA benchmark's reference optima with an independent model.

The ``ga`` suite scores the GA against HiGHS solving the engine's own MILP
(:mod:`gpu_engine.solvers.milp.runner`). A bug shared by that model and the engine's pricing would
go unseen, so this suite solves the same carts (``ga.cart_seed``) with the benchmark peers' model
(:func:`gpu_engine.bench.peers.build_model`: written separately, integer discount cents and
shipping terms of its own), in HiGHS and/or OR-Tools CP-SAT, each answer re-priced by the
engine, and counts per size: both proven and equal (agree), both proven and different (must be
0), and carts where either side found a cheaper assignment than the other's proven optimum
(must be 0). Solvers run one thread each, in parallel worker processes (``peers.run_peers``
isolates HiGHS from OR-Tools, whose libraries clash in one process).
"""

from __future__ import annotations

import os
import time
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any

from gpu_engine.bench import ga
from gpu_engine.bench.peers import run_peers

SUITE = "ga_check"


def add_arguments(parser) -> None:
    parser.add_argument("--ga-check-sizes", default="30,50,100", help="ga_check: lines per cart")
    parser.add_argument("--ga-check-carts", default="100", help="ga_check: carts per size (list)")
    parser.add_argument("--ga-check-solvers", default="highs,cpsat", help="ga_check: peers")
    parser.add_argument(
        "--ga-check-cpsat-max-lines", type=int, default=30, help="ga_check: CP-SAT up to here"
    )
    parser.add_argument("--ga-check-limit-s", type=float, default=60.0)
    parser.add_argument("--ga-check-workers", type=int, default=None)


def _per_size(value: str, sizes: list[int]) -> list[int]:
    counts = [int(c) for c in value.split(",")]
    return counts if len(counts) == len(sizes) else [counts[0]] * len(sizes)


# Carts per peer process: its start-up (Python, NumPy, the solver library) is paid per chunk.
CHUNK = 4


def _independent(solver: str, jobs: list[tuple[int, int]], limit_s: float) -> list[dict]:
    problems = [ga._problem(n_lines, k) for n_lines, k in jobs]
    return run_peers(problems, solvers=(solver,), repeats=1, time_limit_s=limit_s)[solver]


def _compare(engine: dict[str, Any], peer: dict[str, Any]) -> str:
    if peer.get("total") is None:
        return "peer_no_answer"
    both = engine["proven"] and peer["optimal"]
    if both:
        return "agree" if engine["total"] == peer["total"] else "disagree"
    if engine["proven"] and peer["total"] < engine["total"]:
        return "peer_beats_proven"
    if peer["optimal"] and engine["total"] is not None and engine["total"] < peer["total"]:
        return "engine_beats_proven"
    return "unproven"


def run(args) -> list[dict[str, Any]]:
    sizes = [int(s) for s in args.ga_check_sizes.split(",")]
    counts = _per_size(args.ga_check_carts, sizes)
    solvers = [s for s in args.ga_check_solvers.split(",") if s]
    workers = args.ga_check_workers or max(1, (os.cpu_count() or 2) - 2)
    limit_s = args.ga_check_limit_s
    started = time.perf_counter()
    jobs = [(n, k) for n, count in zip(sizes, counts, strict=True) for k in range(count)]
    engine_workers = max(1, workers // 2)
    # Each peer chunk starts its own solver process (run_peers): threads suffice to wait on them.
    with (
        ProcessPoolExecutor(engine_workers) as pool,
        ThreadPoolExecutor(max(1, workers - engine_workers)) as threads,
    ):
        engine: dict[tuple[int, int], Future] = {
            job: pool.submit(ga._highs_job, *job, limit_s * 1e3) for job in jobs
        }
        peers: dict[tuple[str, int, int], Any] = {}
        for solver in solvers:
            mine = [j for j in jobs if solver != "cpsat" or j[0] <= args.ga_check_cpsat_max_lines]
            for start in range(0, len(mine), CHUNK):
                chunk = mine[start : start + CHUNK]
                future = threads.submit(_independent, solver, chunk, limit_s)
                for position, job in enumerate(chunk):
                    peers[(solver, *job)] = (future, position)
        rows = []
        for solver in solvers:
            for n in sizes:
                keys = [key for key in peers if key[0] == solver and key[1] == n]
                if not keys:
                    continue
                outcomes: dict[str, int] = {}
                for key in keys:
                    future, position = peers[key]
                    verdict = _compare(engine[key[1:]].result(), future.result()[position])
                    outcomes[verdict] = outcomes.get(verdict, 0) + 1
                rows.append(
                    {
                        "suite": SUITE,
                        "case": f"{n} lines, {len(keys)} carts (ga suite's seeds)",
                        "peer": f"{solver} on peers.build_model (1 thread, {limit_s:g} s)",
                        "agree": outcomes.get("agree", 0),
                        "disagree": outcomes.get("disagree", 0),
                        "beats_a_proven_optimum": outcomes.get("peer_beats_proven", 0)
                        + outcomes.get("engine_beats_proven", 0),
                        "not_both_proven": outcomes.get("unproven", 0)
                        + outcomes.get("peer_no_answer", 0),
                    }
                )
    for row in rows:
        row["wall_s"] = round(time.perf_counter() - started, 1)
    return rows
