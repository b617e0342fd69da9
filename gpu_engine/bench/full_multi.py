"""Full search split over several GPUs: one 11- and one 12-line cart (8 offers a
line, 24 merchants, :func:`gpu_engine.bench.instances.uniform_cart`, as the ``full_search``
suite), its rows cut evenly over 1, 2, 4 ... of ``--full-multi-devices`` by
``solve_gpu_full(device_ids=...)``: assignments/s per GPU count, speedup, scaling efficiency,
and the answer (total and assignment) compared with one GPU's and with the exact CPU DP."""

from __future__ import annotations

import functools
from typing import Any

from gpu_engine import CartProblem, gpu_available, solve
from gpu_engine.bench.batch_multi import device_list, gpu_counts
from gpu_engine.bench.common import time_ms
from gpu_engine.bench.instances import uniform_cart

SUITE = "full_multi"


def add_arguments(parser) -> None:
    parser.add_argument(
        "--full-multi-devices",
        default="",
        help="comma-separated GPU ids (repeats allowed); default: every visible GPU",
    )
    parser.add_argument(
        "--full-multi-shapes", default="11x8x24,12x8x24", help="LINESxOFFERSxMERCHANTS, ..."
    )
    parser.add_argument("--full-multi-repeats", type=int, default=3)
    parser.add_argument("--full-multi-counts", default="", help="GPU counts (default 1, 2, 4 ...)")


def run(args) -> list[dict[str, Any]]:
    if not gpu_available():
        return [{"suite": SUITE, "error": "no GPU here (or the CUDA simulator): skipped"}]
    ids = device_list(args.full_multi_devices)
    rows: list[dict[str, Any]] = []
    for k, shape in enumerate(s for s in args.full_multi_shapes.split(",") if s.strip()):
        lines, offers, merchants = (int(v) for v in shape.lower().split("x"))
        problem = CartProblem.from_dict(uniform_cart(lines, offers, merchants, seed=20 + k))
        rows.extend(_shape_rows(problem, shape, ids, args))
    return rows


def _shape_rows(problem: CartProblem, shape: str, ids: list[int], args) -> list[dict[str, Any]]:
    from gpu_engine.solvers.full.cuda import solve_gpu_full

    exact = solve(problem, algorithm="cpu-dp")
    one = None
    rows = []
    for count in gpu_counts(len(ids), args.full_multi_counts):
        devices = ids[:count]
        # The first timed count also warms every device it uses (warmup=1 in time_ms).
        median, times, sol = time_ms(
            functools.partial(solve_gpu_full, problem, device_ids=devices),
            repeats=args.full_multi_repeats,
        )
        one = one or (median, sol)
        speedup = one[0] / median
        rows.append(
            {
                "suite": SUITE,
                "case": shape,
                "gpus": count,
                "devices": ",".join(str(i) for i in devices),
                "device": sol.device,
                "median_ms": round(median, 3),
                "min_ms": round(min(times), 3),
                "assignments": problem.complexity,
                "rate_per_s": problem.complexity / (median / 1e3),
                "speedup_vs_1": round(speedup, 2),
                "efficiency": round(speedup / count, 2),
                "total": sol.total,
                "optimal": sol.optimal,
                "same_as_1gpu": sol.total == one[1].total and sol.assignment == one[1].assignment,
                "agrees_with_dp": sol.total == exact.total,
            }
        )
    return rows
