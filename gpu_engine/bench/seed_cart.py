"""The Jet.com seed cart (11 lines with 32,17,19,16,29,9,25,10,16,17,24 offers: 7.04e13
assignments) solved exactly by the CPU subset DP, median warm, with HiGHS and CP-SAT."""

from __future__ import annotations

import functools
import statistics
from typing import Any

from gpu_engine import CartProblem, solve
from gpu_engine.bench.common import add_peer_arguments, peer_rows, time_ms
from gpu_engine.bench.instances import seed_cart
from gpu_engine.planning.rates import cpu_full_rate

SUITE = "seed_cart"
YEAR_S = 365.25 * 24 * 3600


def add_arguments(parser) -> None:
    parser.add_argument("--seed-cart-repeats", type=int, default=200)
    parser.add_argument("--seed-cart-seeds", default="2015,1,2,3,4", help="comma-separated")
    add_peer_arguments(parser, "seed-cart")


def run(args) -> list[dict[str, Any]]:
    rows, cases = [], []
    for seed in (int(s) for s in args.seed_cart_seeds.split(",")):
        data = seed_cart(seed)
        problem = CartProblem.from_dict(data)
        median, times, sol = time_ms(
            functools.partial(solve, problem, algorithm="cpu-dp"),
            repeats=args.seed_cart_repeats,
            warmup=3,
        )
        rows.append(
            {
                "suite": SUITE,
                "case": f"seed-{seed}",
                "solver": "dp (cpu)",
                "device": sol.device,
                "median_ms": round(median, 4),
                "p90_ms": round(statistics.quantiles(times, n=10)[-1], 4),
                "complexity": problem.complexity,
                "cpu_full_years": problem.complexity / cpu_full_rate() / YEAR_S,
                "total": sol.total,
                "optimal": sol.optimal,
                "path": sol.stats.get("path"),
            }
        )
        cases.append((f"seed-{seed}", problem, sol.total, median))
    if not args.seed_cart_no_peers:
        rows.extend(peer_rows(SUITE, cases, repeats=args.seed_cart_peer_repeats))
    return rows
