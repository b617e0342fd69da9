"""Batch solver on carts shaped like real shoppers' (issue 30): the mix of
:mod:`gpu_engine.batch.mix` solved exactly in one batch, GPU (when present) against the CPU twin
on all host cores, with engine time (plan, copies, kernels, copy back, from packed input),
carts/s, the time split by cart shape (lines x merchants, each shape's carts solved as a batch
of their own, with the methods the plan chose), and a sample checked against the per-cart
exact DP. ``--batch-mix-unpruned gpu,cpu`` times the same carts without the plan's pruning
too on those devices (the before/after of :mod:`gpu_engine.batch.prune`);
``--batch-mix-v2-carts`` adds version 2 carts (:mod:`gpu_engine.bench.batch_mix_v2`).
"""

from __future__ import annotations

import time
from typing import Any

import numba
import numpy as np

from gpu_engine import solve
from gpu_engine.batch import solve_packed
from gpu_engine.batch.engine import RawAnswers
from gpu_engine.batch.mix import mix_batch, take_carts
from gpu_engine.batch.pack import DP, FULL, TOO_LARGE, PackedBatch
from gpu_engine.batch.synthetic import cart_problem
from gpu_engine.device import gpu_available, gpu_name

SUITE = "batch_mix"
LINE_BUCKETS = ((3, 4), (5, 7), (8, 10), (11, 14))
MERCHANT_BUCKETS = ((1, 9), (10, 14), (15, 20))


def add_arguments(parser) -> None:
    parser.add_argument("--batch-mix-sizes", default="1000000", help="comma-separated carts")
    parser.add_argument("--batch-mix-seed", type=int, default=0)
    parser.add_argument("--batch-mix-repeats", type=int, default=3, help="timed GPU runs")
    parser.add_argument("--batch-mix-no-cpu", action="store_true", help="skip the CPU twin")
    parser.add_argument(
        "--batch-mix-unpruned",
        default="",
        help="comma-separated devices (gpu, cpu) that also run without the pruning",
    )
    parser.add_argument(
        "--batch-mix-no-shapes", action="store_true", help="skip the split by cart shape"
    )
    parser.add_argument(
        "--batch-mix-shape-cpu",
        action="store_true",
        help="time every shape on the CPU twin too (always without a GPU)",
    )
    parser.add_argument("--batch-mix-check-share", type=float, default=0.01)
    parser.add_argument("--batch-mix-check-max", type=int, default=10_000)
    parser.add_argument(
        "--batch-mix-v2-carts", type=int, default=0, help="version 2 carts (0: none)"
    )


def run(args) -> list[dict[str, Any]]:
    gpu = gpu_available()
    _warm(gpu)
    rows: list[dict[str, Any]] = []
    for n in [int(v) for v in args.batch_mix_sizes.split(",") if v.strip()]:
        rows.extend(_size_rows(args, n, gpu))
    if args.batch_mix_v2_carts > 0:
        from gpu_engine.bench.batch_mix_v2 import v2_rows

        rows.extend(v2_rows(args.batch_mix_v2_carts, seed=args.batch_mix_seed, gpu=gpu))
    return rows


def _warm(gpu: bool) -> None:
    """Compilation is not engine time: both devices, pruned and not, on a small batch (on the
    GPU both variants the engine picks by size, with the heavy tiers' launches)."""
    small = mix_batch(3000, seed=12345)
    if gpu:
        from gpu_engine.batch import staging
        from gpu_engine.batch.gpu import DEFAULT_VARIANT, SMALL_BATCH_VARIANT

        staging.warm()
    for prune in (True, False):
        solve_packed(small, device="cpu", prune=prune)
        if gpu:
            for variant in (SMALL_BATCH_VARIANT, DEFAULT_VARIANT):
                solve_packed(small, device="gpu", prune=prune, gpu_variant=variant)
    solve(cart_problem(small, 0), algorithm="dp")


def _timed(batch: PackedBatch, device: str, repeats: int, prune: bool) -> tuple[float, RawAnswers]:
    """(median ms, answers) of ``repeats`` runs; the fastest run goes to the answers'
    timings as ``min_ms``."""
    times, answers = [], None
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        answers = solve_packed(batch, device=device, prune=prune)
        times.append((time.perf_counter() - t0) * 1e3)
    assert answers is not None
    answers.timings["min_ms"] = min(times)
    return float(np.median(times)), answers


def _size_rows(args, n: int, gpu: bool) -> list[dict[str, Any]]:
    t0 = time.perf_counter()
    batch = mix_batch(n, seed=args.batch_mix_seed)
    base = {"suite": SUITE, "case": f"{n} carts (mix v1)"}
    rows: list[dict[str, Any]] = []
    runs: dict[tuple[str, bool], tuple[float, RawAnswers]] = {}
    unpruned = {v.strip() for v in args.batch_mix_unpruned.split(",") if v.strip()}
    devices = (["gpu"] if gpu else []) + ([] if args.batch_mix_no_cpu else ["cpu"])
    for device in devices:
        for prune in (True, False) if device in unpruned else (True,):
            repeats = args.batch_mix_repeats if device == "gpu" else 1
            runs[device, prune] = _timed(batch, device, repeats, prune)
            rows.append(_engine_row(base, device, prune, n, *runs[device, prune]))
    if not runs:
        return [{**base, "error": "nothing to run: no GPU and --batch-mix-no-cpu"}]
    rows[0]["generate_s"] = round(time.perf_counter() - t0, 2)
    ref = runs.get(("gpu", True)) or runs.get(("cpu", True))
    assert ref is not None
    for (device, prune), (_, answers) in runs.items():
        row = next(r for r in rows if r["device_kind"] == device and r["pruned"] == prune)
        row["same_totals_as_reference"] = bool(np.array_equal(answers.total, ref[1].total))
    if ("gpu", True) in runs and ("cpu", True) in runs:
        gpu_row = rows[0]
        gpu_row["speedup_vs_cpu_twin"] = round(runs["cpu", True][0] / runs["gpu", True][0], 1)
        gpu_row["same_choices_as_cpu"] = bool(
            np.array_equal(runs["gpu", True][1].choice, runs["cpu", True][1].choice)
        )
    if not args.batch_mix_no_shapes:
        shape_devices = ["gpu"] if gpu else ["cpu"]
        if gpu and args.batch_mix_shape_cpu and not args.batch_mix_no_cpu:
            shape_devices.append("cpu")
        rows.extend(_shape_rows(base, batch, shape_devices, unpruned, args.batch_mix_repeats))
    rows.append(_check_row(base, batch, ref[1], args))
    return rows


def _engine_row(base, device: str, prune: bool, n: int, ms: float, answers) -> dict[str, Any]:
    method = answers.plan.method
    label = gpu_name() if device == "gpu" else f"cpu ({numba.get_num_threads()} threads)"
    return {
        **base,
        "solver": ("gpu-batch" if device == "gpu" else "cpu-twin") + ("" if prune else " unpruned"),
        "device": label,
        "device_kind": device,
        "pruned": prune,
        "engine_ms": round(ms, 1),
        "carts_per_s": round(n / ms * 1e3),
        "full": int((method == FULL).sum()),
        "dp": int((method == DP).sum()),
        "too_large": int((method == TOO_LARGE).sum()),
        "steps_estimated": int(answers.plan.work.sum()),
        **{key: round(float(value), 1) for key, value in answers.timings.items()},
        "note": "plan + copies + kernels + copy back, from packed input"
        if device == "gpu"
        else "plan + prange over carts, from packed input",
    }


def shape_of(batch: PackedBatch) -> tuple[np.ndarray, np.ndarray]:
    """Per cart its lines and its packed merchants (those with an eligible offer)."""
    return np.diff(batch.line_ptr), np.diff(batch.merch_ptr)


def _shape_rows(base, batch, devices, unpruned, repeats: int) -> list[dict[str, Any]]:
    """Each (lines, merchants) bucket's carts as a batch of their own on each device: its
    time, the time per million carts of that shape, and the methods the plan chose."""
    lines, merchants = shape_of(batch)
    rows = []
    for lo_l, hi_l in LINE_BUCKETS:
        for lo_m, hi_m in MERCHANT_BUCKETS:
            carts = np.flatnonzero(
                (lines >= lo_l) & (lines <= hi_l) & (merchants >= lo_m) & (merchants <= hi_m)
            )
            if carts.size == 0:
                continue
            part = take_carts(batch, carts)
            for device in devices:
                for prune in (True, False) if device in unpruned else (True,):
                    ms, answers = _timed(part, device, repeats if device == "gpu" else 1, prune)
                    method = answers.plan.method
                    rows.append(
                        {
                            **base,
                            "solver": f"shape {device}" + ("" if prune else " unpruned"),
                            "lines": f"{lo_l}-{hi_l}",
                            "merchants": f"{lo_m}-{hi_m}",
                            "carts": int(carts.size),
                            "engine_ms": round(ms, 1),
                            "ms_per_million": round(ms / carts.size * 1e6, 1),
                            "full": int((method == FULL).sum()),
                            "dp": int((method == DP).sum()),
                            "too_large": int((method == TOO_LARGE).sum()),
                            "mean_steps_estimated": round(float(answers.plan.work.mean())),
                        }
                    )
    return rows


def _check_row(base, batch: PackedBatch, answers: RawAnswers, args) -> dict[str, Any]:
    """An evenly spaced sample against the per-cart exact DP's proven optimum."""
    count = min(args.batch_mix_check_max, max(1, round(batch.n_carts * args.batch_mix_check_share)))
    sample = np.unique(np.linspace(0, batch.n_carts - 1, count).astype(np.int64))
    agree = skipped = 0
    mismatches: list[int] = []
    t0 = time.perf_counter()
    for c in sample:
        if answers.plan.method[c] == TOO_LARGE:
            skipped += 1
            continue
        solution = solve(cart_problem(batch, int(c)), algorithm="dp")
        if solution.optimal and solution.total == int(answers.total[c]):
            agree += 1
        else:
            mismatches.append(int(c))
    return {
        **base,
        "solver": "check vs per-cart exact DP",
        "device": answers.device,
        "checked": int(sample.size - skipped),
        "agree": agree,
        "mismatches": len(mismatches),
        "first_mismatches": mismatches[:10],
        "too_large_skipped": skipped,
        "check_s": round(time.perf_counter() - t0, 1),
    }
