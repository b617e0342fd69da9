"""Fuzz every route (:mod:`gpu_engine.fuzz`) on extreme carts in child processes: a row per
route and budget with its crashes, tracebacks, wrong proofs and wall/budget ratio. The same run
as ``python -m gpu_engine fuzz``, which also lists each failing cart and exits 1 on a defect."""

from __future__ import annotations

from typing import Any

SUITE = "fuzz"


def add_arguments(parser) -> None:
    parser.add_argument("--fuzz-carts", type=int, default=50, help="fuzz: generated carts")
    parser.add_argument("--fuzz-seed", type=int, default=0, help="fuzz: the run's seed")
    parser.add_argument("--fuzz-workers", type=int, default=2, help="fuzz: worker processes")
    parser.add_argument(
        "--fuzz-budgets-ms", default="none,200,10", help="fuzz: budgets in ms ('none': no budget)"
    )


def run(args) -> list[dict[str, Any]]:
    from gpu_engine.device import gpu_available
    from gpu_engine.fuzz.command import parse_budgets
    from gpu_engine.fuzz.routes import default_routes
    from gpu_engine.fuzz.runner import FuzzConfig, run_fuzz

    config = FuzzConfig(
        carts=args.fuzz_carts,
        seed=args.fuzz_seed,
        workers=args.fuzz_workers,
        routes=default_routes(include_gpu=gpu_available()),
        budgets_ms=parse_budgets(args.fuzz_budgets_ms),
    )
    result = run_fuzz(config)
    rows = result.tally.rows(config.routes, config.budgets_ms)
    return [
        {"suite": SUITE, "case": f"{row.pop('route')}@{row.pop('budget')}", **row} for row in rows
    ]
