"""Batch solver: N synthetic carts solved exactly in one batch, GPU kernel vs the
CPU twin on all cores vs the per-cart planner loop (timed on a sample, extrapolated), with a
sample checked against the per-cart exact subset DP."""

from __future__ import annotations

import time
from typing import Any

import numba
import numpy as np

from gpu_engine import solve
from gpu_engine.batch import pack_problems, solve_batch, solve_packed, staging
from gpu_engine.batch.launch import Launch
from gpu_engine.batch.pack import DP, FULL, TOO_LARGE
from gpu_engine.batch.synthetic import cart_problem, synthetic_batch
from gpu_engine.bench.batch_variants import variant_named
from gpu_engine.device import gpu_available, gpu_name

SUITE = "batch"


def add_arguments(parser) -> None:
    parser.add_argument(
        "--batch-sizes", default="100000,1000000", help="comma-separated cart counts"
    )
    parser.add_argument("--batch-seed", type=int, default=0)
    parser.add_argument(
        "--batch-check-share", type=float, default=0.01, help="share checked per cart (exact DP)"
    )
    parser.add_argument(
        "--batch-check-max", type=int, default=10_000, help="at most this many carts checked"
    )
    parser.add_argument(
        "--batch-loop-sample", type=int, default=300, help="carts timed in the per-cart loop"
    )
    parser.add_argument("--batch-repeats", type=int, default=3, help="timed runs per device")
    parser.add_argument("--batch-no-cpu", action="store_true", help="skip the CPU twin")
    parser.add_argument(
        "--batch-gpu-variants",
        default="",
        help="comma-separated GPU variants run side by side (baseline, pinned, split, ...); "
        "empty: the default one",
    )


def run(args) -> list[dict[str, Any]]:
    sizes = [int(v) for v in args.batch_sizes.split(",") if v.strip()]
    gpu = gpu_available()
    variants: list[str | None] = [v.strip() for v in args.batch_gpu_variants.split(",")]
    variants = [v for v in variants if v] or [None]
    failed = _warm(gpu, variants)
    rows: list[dict[str, Any]] = []
    for n in sizes:
        base = {"suite": SUITE, "case": f"{n} carts"}
        rows.extend({**base, "solver": _solver(v), "error": e} for v, e in failed.items())
        rows.extend(_size_rows(args, n, gpu, [v for v in variants if v not in failed]))
    return rows


def _variant(name: str | None) -> str | Launch | None:
    return None if name is None else variant_named(name)


def _solver(variant: str | None) -> str:
    return "gpu-batch" if variant is None else f"gpu-batch {variant}"


def _warm(gpu: bool, variants: list[str | None]) -> dict[str | None, str]:
    """Compile both devices' code on a small batch: compilation is not engine time. The batch
    is large enough to hold carts of every tier of the split variants (each compiles its own
    launches). Returns the variants that failed, with their errors: one variant's failure
    must not cost the others their rows."""
    small = synthetic_batch(5000, seed=12345)
    cpu = solve_packed(small, device="cpu")
    failed: dict[str | None, str] = {}
    if gpu:
        staging.warm()
        for variant in variants:
            try:
                answers = solve_packed(small, device="gpu", gpu_variant=_variant(variant))
            except Exception as exc:  # reported as the variant's row, the others still run
                failed[variant] = f"{type(exc).__name__}: {exc}"[:300]
                continue
            if not np.array_equal(answers.total, cpu.total):
                failed[variant] = "warm-up batch: totals differ from the CPU twin"
    problems = [cart_problem(small, c) for c in range(8)]
    solve_batch(problems, device="cpu")
    # The planner's first call in a process warms every CPU solver (seconds): not per-cart time.
    solve(problems[0])
    return failed


def _timed(batch, device: str, repeats: int, variant: str | None = None):
    times, answers = [], None
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        answers = solve_packed(batch, device=device, gpu_variant=_variant(variant))
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times)), min(times), answers


def _size_rows(args, n: int, gpu: bool, variants: list[str | None]) -> list[dict[str, Any]]:
    t0 = time.perf_counter()
    batch = synthetic_batch(n, seed=args.batch_seed)
    gen_s = time.perf_counter() - t0
    case = f"{n} carts"
    base = {"suite": SUITE, "case": case}
    gpu_rows: list[tuple[dict[str, Any], Any]] = []
    if gpu:
        staging.warm()
        for variant in variants:
            try:
                ms, fastest, answers = _timed(batch, "gpu", args.batch_repeats, variant)
            except Exception as exc:  # the variant's row says so, the others still run
                error = f"{type(exc).__name__}: {exc}"[:300]
                gpu_rows.append(({**base, "solver": _solver(variant), "error": error}, None))
                continue
            row = _engine_row(base, _solver(variant), gpu_name(), ms, fastest, n, answers)
            gpu_rows.append((row, answers))
    rows = [row for row, _ in gpu_rows]
    gpu_rows = [(row, answers) for row, answers in gpu_rows if answers is not None]
    ref = gpu_rows[0][1] if gpu_rows else None
    cpu_ms = None
    if not args.batch_no_cpu:
        cpu_ms, cpu_min, cpu = _timed(batch, "cpu", args.batch_repeats if not gpu else 1)
        label = f"cpu ({numba.get_num_threads()} threads)"
        rows.append(_engine_row(base, "cpu-twin", label, cpu_ms, cpu_min, n, cpu))
        for row, answers in gpu_rows:
            row["same_totals_as_cpu"] = bool(np.array_equal(answers.total, cpu.total))
            row["same_choices_as_cpu"] = bool(np.array_equal(answers.choice, cpu.choice))
            row["speedup_vs_cpu_twin"] = round(cpu_ms / row["engine_ms"], 1)
        ref = ref or cpu
    if ref is None:
        return [{**base, "error": "nothing to run: no GPU and --batch-no-cpu"}]
    for row, answers in gpu_rows[1:]:
        row["same_totals_as_first_gpu"] = bool(np.array_equal(answers.total, ref.total))
        row["same_choices_as_first_gpu"] = bool(np.array_equal(answers.choice, ref.choice))
    engine_ms = min([row["engine_ms"] for row, _ in gpu_rows] or [cpu_ms or 0.0])
    rows.append(_loop_row(base, batch, args.batch_loop_sample, engine_ms or None))
    rows.append(_check_row(base, batch, ref, args))
    rows[0]["generate_s"] = round(gen_s, 2)
    return rows


def _engine_row(base, solver, device, median, fastest, n, answers) -> dict[str, Any]:
    method = answers.plan.method
    return {
        **base,
        "solver": solver,
        "device": device,
        "engine_ms": round(median, 1),
        "min_ms": round(fastest, 1),
        "carts_per_s": round(n / median * 1e3),
        "full": int((method == FULL).sum()),
        "dp": int((method == DP).sum()),
        "too_large": int((method == TOO_LARGE).sum()),
        "steps": int(answers.plan.work.sum()),
        **{key: round(value, 1) for key, value in answers.timings.items()},
        "note": "plan + copies + kernel + copy back, from packed input (pack: loop row)"
        if answers.device == "gpu"
        else "plan + prange over carts, from packed input (pack: loop row)",
    }


def _sample(n: int, count: int) -> np.ndarray:
    return np.unique(np.linspace(0, n - 1, max(1, min(count, n))).astype(np.int64))


def _loop_row(base, batch, count: int, engine_ms: float | None) -> dict[str, Any]:
    """The per-cart planner loop on a sample, extrapolated to the batch; packing and the
    Solution objects of solve_batch timed on the same sample."""
    sample = _sample(batch.n_carts, count)
    problems = [cart_problem(batch, int(c)) for c in sample]
    t0 = time.perf_counter()
    for problem in problems:
        solve(problem)
    loop_ms = (time.perf_counter() - t0) * 1e3 / len(problems) * batch.n_carts
    t0 = time.perf_counter()
    pack_problems(problems)
    pack_ms = (time.perf_counter() - t0) * 1e3 / len(problems) * batch.n_carts
    t0 = time.perf_counter()
    solve_batch(problems, device="cpu")
    api_ms = (time.perf_counter() - t0) * 1e3 / len(problems) * batch.n_carts
    row = {
        **base,
        "solver": "per-cart planner loop",
        "device": "cpu (1 thread)",
        "engine_ms": round(loop_ms, 1),
        "note": f"EXTRAPOLATED from {len(problems)} carts; pack_ms / solve_batch_api_ms: "
        "CartProblem packing and solve_batch with Solution objects, same sample, extrapolated",
        "pack_ms": round(pack_ms, 1),
        "solve_batch_api_ms": round(api_ms, 1),
    }
    if engine_ms:
        row["loop_over_engine"] = round(loop_ms / engine_ms, 1)
    return row


def _check_row(base, batch, answers, args) -> dict[str, Any]:
    count = min(args.batch_check_max, max(1, round(batch.n_carts * args.batch_check_share)))
    sample = _sample(batch.n_carts, count)
    agree = skipped = 0
    t0 = time.perf_counter()
    for c in sample:
        if answers.plan.method[c] == TOO_LARGE:
            skipped += 1
            continue
        solution = solve(cart_problem(batch, int(c)), algorithm="dp")
        agree += int(solution.optimal and solution.total == int(answers.total[c]))
    return {
        **base,
        "solver": "check vs per-cart exact DP",
        "device": answers.device,
        "checked": int(sample.size - skipped),
        "agree": agree,
        "all_agree": agree == sample.size - skipped,
        "check_s": round(time.perf_counter() - t0, 1),
    }
