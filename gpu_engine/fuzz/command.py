"""``python -m gpu_engine fuzz``: options, the run, the table; exit 1 on any defect."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

DESCRIPTION = (
    "fuzz every route on extreme carts in child processes and count crashes, tracebacks, "
    "wrong proofs, answers below the optimum and totals that do not re-price"
)
FINDINGS_SHOWN = 30
REFUSALS_SHOWN = 12


def parse_budgets(text: str) -> list[float | None]:
    """``"none,200,10"`` as budgets (None: no budget), each checked as the engine checks one."""
    from gpu_engine.budget import check_budget
    from gpu_engine.problem import ProblemError

    budgets: list[float | None] = []
    for part in text.split(","):
        part = part.strip()
        if part.lower() == "none":
            budgets.append(None)
            continue
        try:
            budgets.append(check_budget(float(part)))
        except (ValueError, ProblemError) as exc:
            raise argparse.ArgumentTypeError(f"bad budget {part!r}: {exc}") from None
    return budgets


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def register_command(subparsers) -> argparse.ArgumentParser:
    """Add ``fuzz`` to a CLI's subcommands."""
    parser = subparsers.add_parser("fuzz", help=DESCRIPTION, description=DESCRIPTION)
    parser.add_argument("--carts", type=int, default=100, help="generated carts (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="the run's seed (default 0)")
    parser.add_argument(
        "--first", type=int, default=0, help="index of the first cart (re-run one: --carts 1)"
    )
    parser.add_argument("--workers", type=_positive, default=2, help="worker processes")
    parser.add_argument(
        "--routes",
        default=None,
        help="comma-separated routes (default: auto and every registered solver; gpu-* only "
        "with a real GPU). fault-* routes (crash, hang, lie on purpose) test the harness",
    )
    parser.add_argument(
        "--budgets-ms",
        type=parse_budgets,
        default=None,
        help="comma-separated budgets in ms, 'none' for no budget (default none,200,10)",
    )
    parser.add_argument(
        "--max-lines", type=int, default=16, help="brute force carts up to this many lines"
    )
    parser.add_argument(
        "--max-assignments",
        type=int,
        default=20_000,
        help="... and up to this many assignments (default 20000)",
    )
    parser.add_argument(
        "--timeout-s", type=float, default=60.0, help="a task's limit without a budget"
    )
    parser.add_argument(
        "--version",
        choices=("1", "2", "all"),
        default="1",
        help="pricing contract of the generated carts: 1 (default), 2 (merchants with several "
        "nodes, weight tiers, stock per node, mixed with version 1 merchants: the v2-* shapes) "
        "or all. Routes that do not price version 2 yet answer FulfillmentUnsupported, counted "
        "as 'unsup' (a defect only on a cart with one node a merchant and no tiers). The "
        "issue 29 acceptance run: --version 2 --carts 10000",
    )
    parser.add_argument(
        "--shapes",
        default=None,
        help="comma-separated cart shapes, of either version (default: those of --version)",
    )
    parser.add_argument(
        "--cart", type=Path, action="append", default=[], help="also run this cart file"
    )
    parser.add_argument(
        "--time-limit-s",
        type=float,
        default=None,
        help="draw no new cart after this many seconds (the carts begun still finish)",
    )
    parser.add_argument("--json", type=Path, default=None, help="write the counts here")
    parser.add_argument(
        "--progress", type=int, default=100, help="a line on stderr every N carts (0: none)"
    )
    parser.add_argument(
        "--save-failures", type=Path, default=None, help="write failing carts to this folder"
    )
    return parser


def _routes(text: str | None) -> list[str]:
    from gpu_engine.device import gpu_available
    from gpu_engine.fuzz.routes import default_routes, known_routes

    if text is None:
        return default_routes(include_gpu=gpu_available())
    routes = [r.strip() for r in text.split(",") if r.strip()]
    unknown = [r for r in routes if r not in known_routes()]
    if unknown:
        raise ValueError(f"unknown route(s) {unknown}; known: {', '.join(known_routes())}")
    return routes


def _shapes(text: str | None, version: str) -> tuple[str, ...]:
    from gpu_engine.fuzz.draw import shape_names

    if text is None:
        return shape_names(version)
    known = shape_names("all")
    shapes = tuple(s.strip() for s in text.split(",") if s.strip())
    unknown = [s for s in shapes if s not in known]
    if unknown:
        raise ValueError(f"unknown shape(s) {unknown}; known: {', '.join(known)}")
    return shapes


def run_command(args: argparse.Namespace) -> int:
    from gpu_engine.fuzz.report import format_findings, format_table
    from gpu_engine.fuzz.runner import DEFAULT_BUDGETS, FuzzConfig, run_fuzz

    try:
        routes, shapes = _routes(args.routes), _shapes(args.shapes, args.version)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    missing = [str(p) for p in args.cart if not p.is_file()]
    if missing:
        print(f"error: no such cart file {missing}", file=sys.stderr)
        return 2
    config = FuzzConfig(
        carts=args.carts,
        seed=args.seed,
        first=args.first,
        workers=args.workers,
        routes=routes,
        budgets_ms=list(DEFAULT_BUDGETS) if args.budgets_ms is None else args.budgets_ms,
        max_lines=args.max_lines,
        max_assignments=args.max_assignments,
        timeout_s=args.timeout_s,
        shapes=shapes,
        files=list(dict.fromkeys(args.cart)),
        save_failures=args.save_failures,
        progress_every=args.progress,
        time_limit_s=args.time_limit_s,
    )
    result = run_fuzz(config)
    tally = result.tally
    rows = tally.rows(config.routes, config.budgets_ms)
    print(format_table([{k: v for k, v in row.items() if k != "max_wall_cart"} for row in rows]))
    print(
        f"\n{tally.carts} carts in {result.wall_s:.1f} s on {config.workers} workers "
        f"({result.restarts} restarted); optimum by brute force {tally.oracles['brute']}, "
        f"by the exact routes {tally.oracles['exact']}, unknown {tally.oracles['none']}"
    )
    slowest = sorted(
        (r for r in rows if r["max_wall_ratio"] is not None and r["max_wall_ratio"] > 1.0),
        key=lambda r: -r["max_wall_ratio"],
    )[:5]
    if slowest:
        worst = ", ".join(
            f"{r['route']}@{r['budget']} {r['max_wall_ratio']}x (cart {r['max_wall_cart']})"
            for r in slowest
        )
        print(f"most over budget: {worst}")
    if tally.refusals:
        print("\nrefusals (route: reason x count):")
        for (route, reason), count in tally.refusals.most_common(REFUSALS_SHOWN):
            print(f"  {route}: {reason} x{count}")
    if tally.findings:
        print(f"\n{len(tally.findings)} findings:")
        print(format_findings(tally.findings, FINDINGS_SHOWN, "python -m gpu_engine fuzz"))
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "argv": sys.argv[1:],
                    "seed": config.seed,
                    "version": args.version,
                    "carts": tally.carts,
                    "wall_s": result.wall_s,
                    "workers": config.workers,
                    "restarts": result.restarts,
                    "oracles": dict(tally.oracles),
                    "shapes": dict(tally.shapes),
                    "rows": rows,
                    "findings": [f.to_dict() for f in tally.findings],
                    "refusals": [
                        {"route": route, "reason": reason, "count": count}
                        for (route, reason), count in tally.refusals.most_common()
                    ],
                },
                indent=2,
            )
        )
    return 1 if result.failed else 0
