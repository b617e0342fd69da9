"""The GPU batch with the whole batch copied to the device first (the "overlap" path,
:mod:`gpu_engine.batch.overlap`, copies chunk by chunk instead and builds on this one).

One copy in (pinned and narrowed: :mod:`gpu_engine.batch.staging`), the plan kernel (thread
``c`` plans cart ``c``), the solve launches of :mod:`gpu_engine.batch.cuda`, one copy out. A
range launch covers as many carts as the scratch budget allows (usually all of them), cart
``lo + b`` on block ``b``; split launches need the whole batch's scratch at once (else they run
as range launches) and give the heaviest carts bigger blocks, heaviest first. The DP scratch is
kept between batches and grown as needed, one set per device (:mod:`gpu_engine.batch.kept`: a
thread on another GPU neither reads these buffers nor waits for their lock). :class:`Launch`
says which of these a run takes; benchmarks compare others
(:mod:`gpu_engine.bench.batch_variants`).
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np
from numba import cuda

from gpu_engine.batch import cuda as batch_cuda
from gpu_engine.batch import staging
from gpu_engine.batch.kept import DeviceKept, every_device, kept_here
from gpu_engine.batch.pack import (
    MAX_WORK,
    BatchPlan,
    CartArrays,
    PackedBatch,
    PlanArrays,
    csr_offsets,
    plan_batch,
)
from gpu_engine.device import simulator_enabled

SIMULATOR_SCRATCH = 16 << 20
# Leave room for the batch itself, other kernels and the CUDA context on a shared card.
SCRATCH_FRACTION = 0.5
# Kept scratch holds at most this share of the device.
KEEP_SCRATCH_FRACTION = 0.25


class Launch(NamedTuple):
    """How :func:`solve_whole` moves the batch and launches its carts; never an answer.

    ``pinned``: narrow copies through pinned buffers and DP scratch kept between batches (else
    pageable int64 copies and scratch of the run's own). ``split``: (the tiers' largest block,
    the light carts' block) to launch the heaviest carts first on bigger blocks, each launch on
    its own stream; None: one range launch of ``THREADS``-thread blocks per scratch range."""

    name: str
    pinned: bool = True
    split: tuple[int, int] | None = None


PINNED = Launch("pinned")
# One warp a light cart leaves fewer threads idle on the smallest carts and fits twice the
# carts an SM.
SPLIT_WARP = Launch("split-warp", split=(1024, 32))


def scratch_limit() -> int:
    if simulator_enabled():
        return SIMULATOR_SCRATCH
    free, _total = cuda.current_context().get_memory_info()
    return int(free * SCRATCH_FRACTION)


def _upload(arrays: dict[str, np.ndarray]) -> dict:
    return {name: cuda.to_device(np.ascontiguousarray(value)) for name, value in arrays.items()}


def solve_whole(
    batch: PackedBatch,
    launch: Launch = PINNED,
    *,
    prefer: int | None = None,
    max_work: int = MAX_WORK,
    timings: dict[str, float] | None = None,
    prune: bool | int = True,
) -> tuple[np.ndarray, np.ndarray, BatchPlan]:
    """(total per cart, cart-local merchant per line, the plan) on the GPU, the whole batch
    copied first (``prune``: see :func:`gpu_engine.batch.pack.plan_batch`); carts planned
    TOO_LARGE keep total -1. One copy in; the plan kernel; the plan's small arrays out and the
    scratch offsets in; the solve launches (as ``launch`` says); one copy out. ``timings``
    receives ``copy_in_ms``, ``plan_ms``, ``kernel_ms``, ``copy_out_ms``, ``launches``, per
    copied array ``in_<name>_mb`` and, where measured, its cast, call and copy milliseconds
    and, for split launches, each launch's carts, block size, registers and local bytes a thread."""
    timings = {} if timings is None else timings
    if batch.n_carts == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, plan_batch(batch, prune=prune)
    t0 = time.perf_counter()
    kept = kept_here()
    arrays = batch.arrays._asdict()
    d = staging.upload(arrays, timings, kept=kept) if launch.pinned else _upload(arrays)
    cuda.synchronize()
    t1 = time.perf_counter()
    plan = _plan_on_device(
        batch, d, prefer=-1 if prefer is None else prefer, max_work=max_work, prune=prune
    )
    d.update(_upload({"ws_ptr": plan.ws_ptr, "pick_ptr": plan.pick_ptr}))
    t2 = time.perf_counter()
    keep = launch.pinned
    with kept.lock:
        chunks = plan.chunks(scratch_limit() + (kept.scratch_bytes() if keep else 0))
        if keep:
            d["out_total"] = cuda.device_array(batch.n_carts, dtype=np.int64)
        else:
            d["out_total"] = cuda.to_device(np.full(batch.n_carts, -1, dtype=np.int64))
        d["out_choice"] = cuda.device_array(max(1, batch.line_qty.size), dtype=np.int64)
        ws_size = max([int(plan.ws_ptr[hi] - plan.ws_ptr[lo]) for lo, hi in chunks] + [1])
        pick_size = max([int(plan.pick_ptr[hi] - plan.pick_ptr[lo]) for lo, hi in chunks] + [1])
        d["ws"] = scratch_array(kept, "ws", ws_size, np.int64, keep)
        d["pick"] = scratch_array(kept, "pick", pick_size, np.uint16, keep)
        if launch.split is not None and len(chunks) == 1:
            launches = _launch_split(plan, d, *launch.split, timings)
        else:
            launches = _launch_ranges(chunks, d)
        cuda.synchronize()
    t3 = time.perf_counter()
    total = d["out_total"].copy_to_host()
    choice = d["out_choice"].copy_to_host()[: batch.line_qty.size]
    timings.update(
        copy_in_ms=(t1 - t0) * 1e3,
        plan_ms=(t2 - t1) * 1e3,
        kernel_ms=(t3 - t2) * 1e3,
        copy_out_ms=(time.perf_counter() - t3) * 1e3,
        launches=launches + 1,
    )
    return total, choice, plan


def scratch_array(kept: DeviceKept, name: str, size: int, dtype: type, keep: bool):
    """Device scratch of at least ``size`` entries on the current device, whose kept state is
    ``kept``. With ``keep``, one buffer per name is kept for the device and grown as needed (a
    gpu worker solves many batches: allocating and freeing gigabytes of DP tables each time
    costs milliseconds), unless it would hold more than :data:`KEEP_SCRATCH_FRACTION` of the
    device's memory. The caller holds ``kept.lock`` until its kernels are done."""
    if not keep:
        return cuda.device_array(size, dtype=dtype)
    held = kept.scratch.get(name)
    if held is not None and held.size >= size:
        return held
    kept.scratch.pop(name, None)
    grown = int(size * 1.25) + 1
    if simulator_enabled():
        cap = SIMULATOR_SCRATCH
    else:
        cap = int(cuda.current_context().get_memory_info()[1] * KEEP_SCRATCH_FRACTION)
    if grown * np.dtype(dtype).itemsize + kept.scratch_bytes() > cap:
        return cuda.device_array(size, dtype=dtype)
    held = cuda.device_array(grown, dtype=dtype)
    kept.scratch[name] = held
    return held


def release_scratch() -> None:
    """Give every device's kept scratch back (the next batch allocates again)."""
    for kept in every_device():
        with kept.lock:
            kept.scratch.clear()


def _launch_ranges(chunks: list[tuple[int, int]], d: dict) -> int:
    """One launch of ``THREADS``-thread blocks per scratch-sized range, cart ``lo + b`` on
    block ``b``, on the default stream (each range reuses the scratch of the one before)."""
    threads = batch_cuda.SIMULATOR_THREADS if simulator_enabled() else batch_cuda.THREADS
    kernel = batch_cuda.get_solve_kernel(d, batch_cuda.THREADS, batch_cuda.RANGE)
    dummy = d["method"]
    for lo, hi in chunks:
        kernel[hi - lo, threads](
            np.int64(lo),
            np.int64(lo),
            dummy,
            d["work"],
            np.int64(0),
            *batch_cuda.solve_kernel_args(d),
        )
    return len(chunks)


def _launch_split(
    plan: BatchPlan, d: dict, heavy_threads: int, light_threads: int, timings: dict
) -> int:
    """The whole batch's scratch at once, in one launch per tier of
    :data:`gpu_engine.batch.cuda.TIERS` and one for the rest, each on its own stream so that
    they overlap. A tier's carts (``work`` at least
    its floor, below the floor of the tier above) run heaviest first, one cart per block of
    the tier's threads (capped by ``heavy_threads`` and by what the compiled kernel allows,
    a power of two for the reduction): the longest carts start first and finish with many
    threads instead of holding a 64-thread block for the whole kernel. The rest, in cart
    order on ``light_threads``-thread blocks, fill the SMs as the tiers drain (one warp a
    cart leaves fewer threads idle on the smallest carts and fits twice the carts an SM)."""
    floor = batch_cuda.TIERS[-1][0]
    heavy = np.flatnonzero(plan.work >= floor)
    order = heavy[np.argsort(-plan.work[heavy], kind="stable")]
    d_order = cuda.to_device(order.astype(np.int32) if order.size else np.zeros(1, np.int32))
    args = batch_cuda.solve_kernel_args(d)
    launches = 0
    start = 0
    for tier_floor, tier_threads in batch_cuda.TIERS:
        stop = start + int(np.count_nonzero(plan.work[order[start:]] >= tier_floor))
        if stop > start:
            shared = min(tier_threads, heavy_threads)
            kernel = batch_cuda.get_solve_kernel(d, shared, batch_cuda.INDEXED)
            call = (np.int64(start), np.int64(0), d_order, d["work"], np.int64(0), *args)
            kernel = batch_cuda.specialized(kernel, call, timings, f"tier_{tier_floor}")
            threads = batch_cuda.block_threads(kernel, shared)
            timings[f"tier_{tier_floor}_carts"] = stop - start
            timings[f"tier_{tier_floor}_threads"] = threads
            kernel[stop - start, threads, cuda.stream()](*call)
            launches += 1
        start = stop
    call = (np.int64(0), np.int64(0), d_order, d["work"], np.int64(floor), *args)
    light = batch_cuda.specialized(
        batch_cuda.get_solve_kernel(d, batch_cuda.THREADS, batch_cuda.LIGHT), call, timings, "light"
    )
    threads = batch_cuda.SIMULATOR_THREADS if simulator_enabled() else light_threads
    light[plan.method.size, threads, cuda.stream()](*call)
    return launches + 1


def _plan_on_device(
    batch: PackedBatch, d: dict, *, prefer: int, max_work: int, prune: bool | int
) -> BatchPlan:
    """Thread ``c`` prunes and plans cart ``c`` (:func:`gpu_engine.batch.prune.prune_cart`,
    :func:`gpu_engine.batch.ops.plan_cart`, reordering the device copy of the cart's offers);
    the plan's arrays stay on the device (``d``) for the solve kernel and its per-cart ones
    come back for the host."""
    n_carts, n_merch = batch.n_carts, int(batch.merch_ptr[-1])
    out = PlanArrays.allocate(
        n_carts,
        n_merch,
        batch.line_qty.size,
        lambda size, dtype: cuda.device_array(max(1, size), dtype=dtype),
    )
    d.update(out._asdict())
    threads = batch_cuda.SIMULATOR_THREADS if simulator_enabled() else batch_cuda.PLAN_THREADS
    batch_cuda.get_plan_kernel()[-(-n_carts // threads), threads](
        np.int64(0),
        np.int64(n_carts),
        *CartArrays.of(d),
        np.int64(max_work),
        np.int64(prefer),
        np.int64(prune),
        *out,
    )
    host = {k: d[k].copy_to_host() for k in ("method", "complexity", "work", "ws", "pick", "skip")}
    return BatchPlan(
        method=host["method"][:n_carts],
        complexity=host["complexity"][:n_carts],
        work=host["work"][:n_carts],
        ws_ptr=csr_offsets(host["ws"][:n_carts]),
        pick_ptr=csr_offsets(host["pick"][:n_carts]),
        skip=host["skip"][:n_merch],
    )
