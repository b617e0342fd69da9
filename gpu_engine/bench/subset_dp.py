"""20 lines x 10 offers x 60 merchants with thresholds and discounts, exact by the GPU subset
DP (CPU merchant DP once for scale), with HiGHS and CP-SAT on the same carts."""

from __future__ import annotations

import functools
from typing import Any

from gpu_engine import CartProblem, gpu_available, solve
from gpu_engine.bench.common import add_peer_arguments, peer_rows, time_ms
from gpu_engine.bench.instances import uniform_cart

SUITE = "subset_dp"


def add_arguments(parser) -> None:
    parser.add_argument("--subset-dp-repeats", type=int, default=5)
    parser.add_argument("--subset-dp-carts", type=int, default=5)
    parser.add_argument("--subset-dp-shape", default="20x10x60", help="LINESxOFFERSxMERCHANTS")
    parser.add_argument("--subset-dp-cpu", action="store_true", help="also time the CPU DP")
    add_peer_arguments(parser, "subset-dp")


def run(args) -> list[dict[str, Any]]:
    lines, offers, merchants = (int(v) for v in args.subset_dp_shape.lower().split("x"))
    algorithm = "gpu-dp" if gpu_available() else "cpu-dp"
    rows, cases = [], []
    for seed in range(args.subset_dp_carts):
        problem = CartProblem.from_dict(uniform_cart(lines, offers, merchants, seed=100 + seed))
        median, times, sol = time_ms(
            functools.partial(solve, problem, algorithm=algorithm),
            repeats=args.subset_dp_repeats,
        )
        case = f"{args.subset_dp_shape}#{seed}"
        row = {
            "suite": SUITE,
            "case": case,
            "solver": algorithm,
            "device": sol.device,
            "median_ms": round(median, 3),
            "min_ms": round(min(times), 3),
            "steps": sol.stats.get("merchant_dp_steps"),
            "total": sol.total,
            "optimal": sol.optimal,
            "path": sol.stats.get("path"),
        }
        # The CPU merchant DP takes about a second here: once for scale, or on request.
        if algorithm != "cpu-dp" and (seed == 0 or args.subset_dp_cpu):
            cpu_ms, _, cpu = time_ms(
                functools.partial(solve, problem, algorithm="cpu-dp"), repeats=1
            )
            row["cpu_dp_ms"] = round(cpu_ms, 1)
            row["cpu_agrees"] = cpu.total == sol.total
        rows.append(row)
        cases.append((case, problem, sol.total, median))
    if not args.subset_dp_no_peers:
        rows.extend(peer_rows(SUITE, cases, repeats=args.subset_dp_peer_repeats))
    return rows
