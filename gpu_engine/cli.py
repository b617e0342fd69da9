"""``python -m gpu_engine``: solve a problem file, run benchmark suites, calibrate rates, or fuzz
every route."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpu_engine")
    commands = parser.add_subparsers(dest="command", required=True)

    solve_p = commands.add_parser("solve", help="solve a cart problem (spec JSON), print JSON")
    solve_p.add_argument("problem", help="path to the problem JSON, or - for stdin")
    solve_p.add_argument(
        "--algorithm",
        default="auto",
        help="auto, cpu-full, gpu-full, dp, cpu-dp, gpu-dp (or any registered solver)",
    )
    solve_p.add_argument(
        "--budget-ms",
        type=_budget_arg,
        default=None,
        help="time budget in ms (> 0, at most one hour), counted from when the problem is "
        "parsed; the JIT cache is loaded and the solvers warmed before that",
    )
    solve_p.add_argument("--seed", type=int, default=0)

    bench_p = commands.add_parser("bench", help="run benchmark suites and print a table")
    bench_p.add_argument("--suite", action="append", default=None, help="suite name (repeatable)")
    bench_p.add_argument("--list", action="store_true", help="list the suites and exit")
    bench_p.add_argument("--json", type=Path, default=None, help="also write the rows here")
    suites = _suites_for(bench_p) if _wants_bench(argv) else {}

    from gpu_engine.fuzz import command as fuzz_command
    from gpu_engine.planning import calibrate as profile_calibrate

    profile_calibrate.register_command(commands)
    fuzz_command.register_command(commands)

    args = parser.parse_args(argv)
    if args.command == "solve":
        return _solve(args)
    if args.command == "calibrate":
        return profile_calibrate.run_command(args)
    if args.command == "fuzz":
        return fuzz_command.run_command(args)
    return _bench(args, suites)


def _budget_arg(text: str) -> float:
    from gpu_engine.budget import check_budget
    from gpu_engine.problem import ProblemError

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"budget_ms must be a number, got {text!r}") from None
    try:
        budget = check_budget(value)
    except ProblemError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    assert budget is not None, "a float is never None"
    return budget


def _wants_bench(argv: list[str] | None) -> bool:
    argv = sys.argv[1:] if argv is None else argv
    return bool(argv) and argv[0] == "bench"


def _suites_for(parser: argparse.ArgumentParser) -> dict[str, Any]:
    from gpu_engine.bench import discover_suites

    suites = discover_suites()
    for name, module in suites.items():
        add = getattr(module, "add_arguments", None)
        if add is not None:
            try:
                add(parser.add_argument_group(name))
            except argparse.ArgumentError as exc:
                print(f"warning: suite {name}: {exc}", file=sys.stderr)
    return suites


def _solve(args: argparse.Namespace) -> int:
    import time

    from gpu_engine import CartProblem, ProblemError, solve

    try:
        raw = sys.stdin.buffer.read() if args.problem == "-" else Path(args.problem).read_bytes()
    except OSError as exc:
        print(f"error: cannot read {args.problem}: {exc.strerror}", file=sys.stderr)
        return 2
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        print(
            f"error: {args.problem}: not valid UTF-8 (byte {exc.start}); the problem must be "
            "UTF-8 JSON",
            file=sys.stderr,
        )
        return 2
    try:
        warmup_ms = _warm_for(args.algorithm, args.budget_ms)
        problem = CartProblem.from_json(text)
        parsed = time.perf_counter()
        solution = solve(
            problem, algorithm=args.algorithm, budget_ms=args.budget_ms, seed=args.seed
        )
    except ProblemError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = solution.to_dict()
    out["budget"] = {
        "budget_ms": args.budget_ms,
        "measured_from": "the problem parsed (after the warm-up)",
        "warmup_ms": warmup_ms,
        "wall_ms": (time.perf_counter() - parsed) * 1e3,
    }
    print(json.dumps(out, indent=2))
    return 0


def _warm_for(algorithm: str, budget_ms: float | None) -> float:
    """:func:`gpu_engine.warmup.warm_before_budget` (nothing to do without a budget). Returns
    the milliseconds spent."""
    if budget_ms is None:
        return 0.0
    from gpu_engine.warmup import warm_before_budget

    return warm_before_budget(algorithm) * 1e3


def _bench(args: argparse.Namespace, suites: dict[str, Any]) -> int:
    if args.list:
        for name, module in suites.items():
            doc = (module.__doc__ or "").strip().splitlines()
            print(f"{name:16s} {doc[0] if doc else ''}")
        return 0
    names = args.suite or list(suites)
    unknown = [n for n in names if n not in suites]
    if unknown:
        print(f"error: unknown suite(s) {unknown}; known: {sorted(suites)}", file=sys.stderr)
        return 2
    rows: list[dict[str, Any]] = []
    failed = False
    for name in names:
        try:
            rows.extend(suites[name].run(args))
        except Exception as exc:  # one broken suite must not hide the others' numbers
            failed = True
            rows.append({"suite": name, "error": f"{type(exc).__name__}: {exc}"})
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2, default=str))
    print(format_table(rows))
    return 1 if failed else 0


def format_table(rows: list[dict[str, Any]]) -> str:
    columns: list[str] = []
    for row in rows:
        columns.extend(k for k in row if k not in columns)
    cells = [[_cell(row.get(c)) for c in columns] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines.extend("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in cells)
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e6 else f"{value:.3e}"
    return str(value)
