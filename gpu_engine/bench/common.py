"""Helpers shared by the benchmark suites: timing, device facts, peer comparison rows."""

from __future__ import annotations

import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

from gpu_engine.device import gpu_available, gpu_name
from gpu_engine.problem import CartProblem


def time_ms(
    fn: Callable[[], Any], *, repeats: int, warmup: int = 1
) -> tuple[float, list[float], Any]:
    """(median ms, all ms, last result) of ``fn`` after ``warmup`` untimed calls."""
    result = None
    for _ in range(warmup):
        result = fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), times, result


def device_facts() -> dict[str, Any]:
    facts: dict[str, Any] = {"cpu": platform.processor() or platform.machine()}
    facts["gpu"] = gpu_name() if gpu_available() else None
    return facts


def add_peer_arguments(parser, prefix: str) -> None:
    parser.add_argument(
        f"--{prefix}-no-peers", action="store_true", help=f"{prefix}: skip HiGHS and CP-SAT"
    )
    parser.add_argument(
        f"--{prefix}-peer-repeats", type=int, default=3, help=f"{prefix}: runs per peer solve"
    )


def peer_rows(
    suite: str,
    cases: list[tuple[str, CartProblem, int, float]],
    *,
    repeats: int,
) -> list[dict[str, Any]]:
    """Run HiGHS and CP-SAT on ``cases`` (name, problem, engine total, engine median ms) and
    return one row per (case, peer) with the time ratio and agreement to the cent."""
    from gpu_engine.bench.peers import run_peers

    results = run_peers([c[1] for c in cases], repeats=repeats)
    rows = []
    for k, (name, _problem, total, engine_ms) in enumerate(cases):
        for peer, per_case in results.items():
            r = per_case[k]
            if "error" in r:
                rows.append({"suite": suite, "case": name, "solver": peer, "error": r["error"]})
                continue
            rows.append(
                {
                    "suite": suite,
                    "case": name,
                    "solver": peer,
                    "device": "cpu (1 thread)",
                    "median_ms": round(r["median_ms"], 3),
                    "total": r["total"],
                    "optimal": r["optimal"],
                    "agrees": r["total"] == total and r["optimal"],
                    "peer_over_engine": round(r["median_ms"] / engine_ms, 1) if engine_ms else None,
                }
            )
    return rows
