"""Batch solver over several GPUs: the same synthetic carts solved on 1, 2, 4 ... of
``--batch-devices``, carts/s per GPU count, the speedup over one GPU and the answers compared
with one GPU's (``solve_packed`` on the first device), every cart and every line.

Without a real GPU the shares run on the CPU twin (one host thread each), so the suite runs
anywhere; its rows say so. ``--batch-devices 0,0`` puts two shares on one card.

Each row also says which variant each share ran (the engine's pick for the share's size),
``concurrency`` (the shares' own times summed over the wall time of all of them: about the
number of devices when the shares ran at once, 1 when they took turns) and numba's threading
layer (the shares' host casts run in it from several threads)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from gpu_engine.batch import solve_packed
from gpu_engine.batch.engine import RawAnswers
from gpu_engine.batch.multi import solve_packed_multi
from gpu_engine.batch.pack import PackedBatch
from gpu_engine.batch.staging import threading_layer
from gpu_engine.batch.synthetic import synthetic_batch
from gpu_engine.device import gpu_available, gpu_name

SUITE = "batch_multi"


def add_arguments(parser) -> None:
    parser.add_argument(
        "--batch-devices",
        default="",
        help="comma-separated GPU ids (repeats allowed); default: every visible GPU",
    )
    parser.add_argument("--batch-multi-sizes", default="1000000", help="comma-separated carts")
    parser.add_argument("--batch-multi-seed", type=int, default=0)
    parser.add_argument("--batch-multi-repeats", type=int, default=3, help="timed runs per count")
    parser.add_argument(
        "--batch-multi-counts",
        default="",
        help="GPU counts to time (prefixes of --batch-devices); default 1, 2, 4 ... and all",
    )
    parser.add_argument(
        "--batch-multi-carts",
        choices=("synthetic", "mix"),
        default="synthetic",
        help="the benchmark's synthetic carts, or issue 30's realistic mix (gpu_engine.batch.mix)",
    )


def device_list(text: str) -> list[int]:
    if text.strip():
        return [int(v) for v in text.split(",") if v.strip()]
    if not gpu_available():
        return [0, 1]
    from numba import cuda

    return list(range(len(cuda.gpus)))


def gpu_counts(n: int, text: str = "") -> list[int]:
    """1, 2, 4 ... up to ``n``, and ``n`` itself (or the given counts, capped at ``n``)."""
    if text.strip():
        return sorted({min(n, int(v)) for v in text.split(",") if v.strip()})
    counts, k = [], 1
    while k < n:
        counts.append(k)
        k *= 2
    return [*counts, n]


def run(args) -> list[dict[str, Any]]:
    ids = device_list(args.batch_devices)
    gpu = gpu_available()
    solver = None if gpu else _cpu_share
    label = "gpu" if gpu else "cpu twin per share (no GPU here)"
    _warm(ids, solver)
    rows: list[dict[str, Any]] = []
    for size in [int(v) for v in args.batch_multi_sizes.split(",") if v.strip()]:
        t0 = time.perf_counter()
        batch = _carts(args.batch_multi_carts, size, args.batch_multi_seed)
        gen_s = time.perf_counter() - t0
        ref = _reference(batch, ids[0], gpu)
        case = f"{size} carts ({args.batch_multi_carts})"
        base = {"suite": SUITE, "case": case, "share_solver": label}
        one_ms = None
        for count in gpu_counts(len(ids), args.batch_multi_counts):
            row = _count_row(base, batch, ids[:count], solver, args.batch_multi_repeats, ref)
            one_ms = one_ms or row["engine_ms"]
            row["speedup_vs_1"] = round(one_ms / row["engine_ms"], 2)
            row["efficiency"] = round(row["speedup_vs_1"] / count, 2)
            rows.append(row)
        rows[-1]["generate_s"] = round(gen_s, 2)
    return rows


def _carts(kind: str, size: int, seed: int) -> PackedBatch:
    if kind == "mix":
        from gpu_engine.batch.mix import mix_batch

        return mix_batch(size, seed=seed)
    return synthetic_batch(size, seed=seed)


def _variants(share_carts: list[int]) -> str:
    """The variant the engine picks for each share's size, "/"-joined."""
    from gpu_engine.batch.gpu import default_variant

    return "/".join(default_variant(n) for n in share_carts)


def _cpu_share(share: PackedBatch, device_id: int) -> RawAnswers:
    return solve_packed(share, device="cpu")


def _warm(ids: list[int], solver) -> None:
    """Every device's context and kernels compiled first: not engine time."""
    small = synthetic_batch(2000, seed=12345)
    for k in sorted(set(ids)):
        solve_packed_multi(small, device_ids=[k], share_solver=solver)
    solve_packed_multi(small, device_ids=ids, share_solver=solver)


def _reference(batch: PackedBatch, device_id: int, gpu: bool) -> RawAnswers:
    """One device's answers, without the split: the single-device batch solver."""
    if not gpu:
        return solve_packed(batch, device="cpu")
    from numba import cuda

    with cuda.gpus[device_id]:
        return solve_packed(batch, device="gpu")


def _count_row(base, batch, ids, solver, repeats, ref) -> dict[str, Any]:
    times, answers = [], None
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        answers = solve_packed_multi(batch, device_ids=ids, share_solver=solver)
        times.append((time.perf_counter() - t0) * 1e3)
    assert answers is not None
    median = float(np.median(times))
    timing = answers.timings
    shares = [round(timing[f"share{i}_ms"], 1) for i in range(len(ids))]
    share_carts = [int(timing[f"share{i}_carts"]) for i in range(len(ids))]
    return {
        **base,
        "gpus": len(ids),
        "devices": ",".join(str(i) for i in ids),
        "device": gpu_name() if solver is None else "cpu",
        "engine_ms": round(median, 1),
        "min_ms": round(min(times), 1),
        "carts_per_s": round(batch.n_carts / median * 1e3),
        "same_totals_as_1gpu": bool(np.array_equal(answers.total, ref.total)),
        "same_choices_as_1gpu": bool(np.array_equal(answers.choice, ref.choice)),
        "gpu_variant": _variants(share_carts) if solver is None else "cpu",
        "threading_layer": threading_layer() or "none yet",
        "split_ms": round(timing["split_ms"], 1),
        "shares_ms": round(timing["shares_ms"], 1),
        "concurrency": round(
            sum(timing[f"share{i}_ms"] for i in range(len(ids))) / max(timing["shares_ms"], 1e-9), 2
        ),
        "share_ms": "/".join(str(v) for v in shares),
        "share_carts": "/".join(str(v) for v in share_carts),
        "share_chunks": "/".join(
            str(int(timing.get(f"share{i}_chunks", 1))) for i in range(len(ids))
        ),
        "note": "estimate + guided cuts; per device thread, chunks taken as it frees: slice, "
        "copies + plan + kernel + copy "
        "back; merge. Last run's phases; engine_ms the median of all runs",
    }
