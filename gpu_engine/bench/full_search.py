"""Full-search rates: GPU (and CPU) assignments priced per second on 10 lines x 8 offers x 24
merchants (8^10 = 1.07e9 assignments), with HiGHS and CP-SAT on the same cart."""

from __future__ import annotations

import functools
from typing import Any

from gpu_engine import CartProblem, gpu_available, solve
from gpu_engine.bench.common import add_peer_arguments, peer_rows, time_ms
from gpu_engine.bench.instances import uniform_cart

SUITE = "full_search"


def add_arguments(parser) -> None:
    parser.add_argument("--full-search-repeats", type=int, default=5)
    parser.add_argument("--full-search-shape", default="10x8x24", help="LINESxOFFERSxMERCHANTS")
    parser.add_argument(
        "--full-search-variants", action="store_true", help="also time the kernel variants"
    )
    add_peer_arguments(parser, "full-search")


def _shape(text: str) -> tuple[int, int, int]:
    lines, offers, merchants = (int(v) for v in text.lower().split("x"))
    return lines, offers, merchants


def run(args) -> list[dict[str, Any]]:
    lines, offers, merchants = _shape(args.full_search_shape)
    repeats = args.full_search_repeats
    problem = CartProblem.from_dict(uniform_cart(lines, offers, merchants, seed=10))
    exact = solve(problem, algorithm="cpu-dp").total
    rows = [_cpu_row(lines, offers, merchants)]
    engine_ms = None
    if gpu_available():
        gpu_rows = _gpu_rows(problem, exact, repeats, args.full_search_variants)
        rows.extend(gpu_rows)
        engine_ms = gpu_rows[0].get("median_ms")
        bigger = CartProblem.from_dict(uniform_cart(lines + 1, offers, merchants, seed=11))
        rows.extend(_gpu_rows(bigger, solve(bigger, algorithm="cpu-dp").total, 3, False))
    else:
        rows.append(
            {
                "suite": SUITE,
                "case": args.full_search_shape,
                "solver": "gpu-full",
                "error": "no GPU here (or the CUDA simulator): skipped",
            }
        )
    if not args.full_search_no_peers:
        engine_ms = engine_ms or rows[0]["est_full_ms"]
        rows.extend(
            peer_rows(
                SUITE,
                [(args.full_search_shape, problem, exact, engine_ms)],
                repeats=args.full_search_peer_repeats,
            )
        )
    return rows


def _cpu_row(lines: int, offers: int, merchants: int) -> dict[str, Any]:
    # Two lines fewer keeps the CPU run near a second; the rate carries over.
    small = CartProblem.from_dict(uniform_cart(lines - 2, offers, merchants, seed=10))
    median, _, sol = time_ms(lambda: solve(small, algorithm="cpu-full"), repeats=3)
    rate = small.complexity / (median / 1e3)
    full = offers**lines
    return {
        "suite": SUITE,
        "case": f"{lines - 2}x{offers}x{merchants}",
        "solver": "cpu-full",
        "device": "cpu (1 thread)",
        "median_ms": round(median, 3),
        "assignments": small.complexity,
        "rate_per_s": rate,
        "est_full_ms": full / rate * 1e3,
        "total": sol.total,
        "optimal": sol.optimal,
        "agrees": sol.total == solve(small, algorithm="cpu-dp").total,
    }


def _gpu_rows(problem: CartProblem, exact: int, repeats: int, variants: bool) -> list[dict]:
    from gpu_engine.solvers.full.cuda import LaunchConfig, solve_gpu_full

    configs = [("default", LaunchConfig())]
    if variants:
        configs += [
            ("single-line", LaunchConfig(pair=False)),
            ("int64", LaunchConfig(int32=False)),
            ("shared-reduce", LaunchConfig(shuffle=False)),
            ("threads128", LaunchConfig(threads=128)),
            ("threads512", LaunchConfig(threads=512)),
            ("chunk16", LaunchConfig(rows_per_chunk=16)),
            ("maxreg64", LaunchConfig(max_registers=64)),
            ("maxreg96", LaunchConfig(max_registers=96)),
        ]
    rows: list[dict[str, Any]] = []
    case = f"{problem.n_items}x{int(problem.cand_count.max())}x{problem.n_merchants}"
    for name, config in configs:
        try:
            median, times, sol = time_ms(
                functools.partial(solve_gpu_full, problem, config=config), repeats=repeats
            )
        except Exception as exc:  # one variant failing must not hide the others
            rows.append(
                {"suite": SUITE, "case": case, "solver": f"gpu-full[{name}]", "error": repr(exc)}
            )
            continue
        rows.append(
            {
                "suite": SUITE,
                "case": case,
                "solver": f"gpu-full[{name}]",
                "device": sol.device,
                "median_ms": round(median, 3),
                "min_ms": round(min(times), 3),
                "assignments": problem.complexity,
                "rate_per_s": problem.complexity / (median / 1e3),
                "total": sol.total,
                "optimal": sol.optimal,
                "agrees": sol.total == exact,
                "pricing": sol.stats.get("pricing_device_function"),
            }
        )
    return rows + _resource_rows()


def _resource_rows() -> list[dict]:
    from gpu_engine.solvers.full.cuda import kernel_resources

    return [{"suite": SUITE, "case": "kernel", **r} for r in kernel_resources()]
