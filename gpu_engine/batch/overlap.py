"""The "overlap" GPU variant: the batch in :data:`CHUNKS` contiguous cart ranges, each one's
copy in, plan and solve queued on its own streams, so that chunk ``k + 1``'s cast (host) and
copy (copy engine) run while chunk ``k``'s kernels run (SMs).

Per chunk ``k`` (carts ``lo .. hi - 1``, their lines, offers and merchants, all contiguous in
the CSR arrays): the host casts the chunk's slice of every array into its pinned buffer
(narrow types as in :mod:`gpu_engine.batch.staging`) and queues on stream ``u_k`` the copies
into the same slice of kept, whole-batch device arrays, the plan kernel over ``lo .. hi`` and
the copy back of the chunk's plan. Once chunk ``k``'s plan is back (while chunk ``k + 1``
uploads), the host turns its scratch sizes into offsets and heavy carts into an order (as in
"split-warp"), and queues the offsets' copy, the tier launches (heaviest carts first, bigger
blocks, each tier on its own stream) and the light launch, then the answers' copy back;
while the GPU works on, the host moves each chunk's plan and answers out of the pinned buffers
(which serve every batch) into the caller's arrays.

CSR pointers keep their whole-batch values: a chunk copies pointer entries ``lo + 1 .. hi``
(the first chunk from 0), so the entry at ``lo`` comes from the chunk before; every chunk's
copies wait for the previous chunk's copies (an event), so nothing reads an entry another
stream has not written yet (the copies share one copy engine anyway). The DP scratch is the
kept "ws"/"pick" scratch of :mod:`gpu_engine.batch.launch` at the chunk's whole-batch offsets;
a chunk beyond it gets its own array for this batch, and the kept scratch grows afterwards.
Answers never depend on the chunking.

The kept device arrays, streams, pinned buffers and scratch are the current device's
(:mod:`gpu_engine.batch.kept`), used under that device's lock only: batches on two GPUs run
at once, two batches on one GPU in turn.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import cuda

from gpu_engine.batch import cuda as batch_cuda
from gpu_engine.batch import staging
from gpu_engine.batch.kept import DeviceKept, every_device, kept_here
from gpu_engine.batch.launch import PINNED, scratch_array, scratch_limit, solve_whole
from gpu_engine.batch.pack import BatchPlan, CartArrays, PackedBatch, PlanArrays
from gpu_engine.device import simulator_enabled

CHUNKS = 6
GROWTH = 1.25

# Array: the CSR level it is sliced by ("cart+1"/"line+1": a pointer array over carts/lines).
LEVEL = {
    "line_ptr": "cart+1",
    "merch_ptr": "cart+1",
    "line_qty": "line",
    "offer_ptr": "line+1",
    "offer_merchant": "offer",
    "offer_amount": "offer",
    "merch_row": "merchant",
}
PARAMS = ("base", "extra", "free_over", "dmin", "dbp")
# Plan arrays copied back per chunk: (name, level).
PLAN_OUT = (
    ("method", "cart"),
    ("complexity", "cart"),
    ("work", "cart"),
    ("ws", "cart"),
    ("pick", "cart"),
    ("skip", "merchant"),
)


class _TooBig(Exception):
    """The chunks' own scratch would not fit the device: the batch runs as "pinned"."""


class _Wide(Exception):
    """An array's chunk has a value outside its narrow type: rerun with it wide."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


@dataclass
class _Run:
    batch: PackedBatch
    bounds: np.ndarray
    wide: set[str]
    kept: DeviceKept
    d: dict = field(default_factory=dict)
    host: dict = field(default_factory=dict)
    keep_alive: list = field(default_factory=list)
    fresh_bytes: int = 0
    limit: int = 0
    heavy: int = 0
    kernels: dict = field(default_factory=dict)
    out: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)


def chunk_bounds(batch: PackedBatch, chunks: int) -> np.ndarray:
    """Cart boundaries 0 = b_0 < ... < b_K = C of at most ``chunks`` ranges with about as many
    offers each (offers are most of the bytes)."""
    n = batch.n_carts
    at_cart = batch.offer_ptr[batch.line_ptr]
    targets = at_cart[-1] * np.arange(1, max(1, chunks)) / max(1, chunks)
    cuts = np.searchsorted(at_cart, targets, side="left")
    return np.unique(np.concatenate(([0], np.clip(cuts, 0, n), [n]))).astype(np.int64)


def solve_overlap(
    batch: PackedBatch,
    *,
    prefer: int,
    max_work: int,
    timings: dict[str, float],
    chunks: int | None = None,
    prune: bool | int = True,
) -> tuple[np.ndarray, np.ndarray, BatchPlan]:
    """(total per cart, cart-local merchant per line, the plan), as ``solve_whole``. An array
    with a value outside its narrow type makes the batch start again with it wide; chunks
    whose scratch would not fit the device make it run as "pinned"."""
    wide: set[str] = set()
    kept = kept_here()
    while True:
        bounds = chunk_bounds(batch, CHUNKS if chunks is None else chunks)
        run = _Run(batch=batch, bounds=bounds, wide=wide, kept=kept)
        with kept.lock:
            try:
                result = _solve(run, prefer, max_work, prune)
                too_big = False
            except _Wide as exc:
                cuda.synchronize()  # its queued copies still read the pinned buffers
                wide.add(exc.name)
                continue
            except _TooBig:
                cuda.synchronize()
                too_big = True
        if too_big:  # outside the lock: solve_whole takes it
            timings["overlap_fallback"] = 1
            return solve_whole(
                batch, PINNED, prefer=prefer, max_work=max_work, timings=timings, prune=prune
            )
        timings.update(run.timings)
        return result


def _solve(
    run: _Run, prefer: int, max_work: int, prune: bool | int
) -> tuple[np.ndarray, np.ndarray, BatchPlan]:
    bounds = run.bounds
    n_chunks = bounds.size - 1
    t0 = time.perf_counter()
    _allocate(run)
    run.limit = scratch_limit()
    streams = _stream_pool(run.kept, 3 * n_chunks)
    start, done = cuda.event(), cuda.event()
    start.record(streams[0])
    t1 = time.perf_counter()
    uploaded = solved = None
    cast_s = wait_s = 0.0
    plans: list = []
    answered: list = []
    # Chunk k + 1 is cast and queued before chunk k's solve is queued: the host's cast is the
    # slow part of the copy in, and chunk k's plan is back by then.
    for k in range(n_chunks + 1):
        if k < n_chunks:
            t = time.perf_counter()
            uploaded = _upload_chunk(run, k, streams[3 * k], uploaded)
            cast_s += time.perf_counter() - t
            plans.append(_plan_chunk(run, k, streams[3 * k], prefer, max_work, prune))
        if k > 0:
            t = time.perf_counter()
            plans[k - 1].synchronize()
            wait_s += time.perf_counter() - t
            solved, answers = _solve_chunk(run, k - 1, streams[3 * (k - 1) : 3 * k], solved)
            answered.append(answers)
    t2 = time.perf_counter()
    # Each chunk's answers leave the pinned buffers (reused by the next batch) as soon as they
    # are back, while later chunks still run.
    for k, answers in enumerate(answered):
        answers.synchronize()
        _collect(run, k)
    cuda.synchronize()
    done.record(streams[0])
    done.synchronize()
    t3 = time.perf_counter()
    out = run.out
    total, choice = out["out_total"], out["out_choice"]
    plan = BatchPlan(
        method=out["method"],
        complexity=out["complexity"],
        work=out["work"],
        ws_ptr=out["ws_ptr"],
        pick_ptr=out["pick_ptr"],
        skip=out["skip"],
    )
    if run.keep_alive:
        run.keep_alive.clear()
        scratch_array(run.kept, "ws", int(plan.ws_ptr[-1]), np.int64, True)
        scratch_array(run.kept, "pick", int(plan.pick_ptr[-1]), np.uint16, True)
    gpu_ms = start.elapsed_time(done)
    run.timings.update(
        setup_ms=(t1 - t0) * 1e3,
        cast_ms=cast_s * 1e3,
        plan_wait_ms=wait_s * 1e3,
        enqueue_ms=(t2 - t1) * 1e3,
        drain_ms=(t3 - t2) * 1e3,
        copy_out_ms=(time.perf_counter() - t3) * 1e3,
        chunks=n_chunks,
    )
    for name in LEVEL:
        run.timings[f"in_{name}_mb"] = run.host[name].nbytes / 1e6
    if gpu_ms >= 0:  # the simulator's events have no times
        run.timings["gpu_ms"] = gpu_ms
        # From the first chunk's copy in to the last one's end: the casts set this pace.
        run.timings["inputs_on_device_ms"] = start.elapsed_time(uploaded)
    return total, choice, plan


def _stream_pool(kept: DeviceKept, n: int) -> list:
    """``n`` streams of the current device, kept with its state (a stream is its context's)."""
    while len(kept.streams) < n:
        kept.streams.append(cuda.stream())
    return kept.streams[:n]


def _kept(kept: DeviceKept, name: str, size: int, dtype: type | np.dtype) -> Any:
    """A device array of ``size`` values of ``dtype`` (a view of one the device keeps per name
    and grows: no allocation, and no ``cuMemFree`` waiting for the device, once the sizes are
    seen)."""
    dtype = np.dtype(dtype)
    held = kept.arrays.get(name)
    if held is None or held.dtype != dtype or held.size < max(1, size):
        kept.arrays.pop(name, None)
        held = cuda.device_array(int(max(1, size) * GROWTH) + 1, dtype=dtype)
        kept.arrays[name] = held
    return held[: max(1, size)]


def release() -> None:
    """Give every device's kept arrays and streams back (tests; a worker keeps them)."""
    for kept in every_device():
        with kept.lock:
            kept.arrays.clear()
            kept.streams.clear()


def _dtype(run: _Run, name: str) -> np.dtype:
    values = getattr(run.batch, name)
    if name in run.wide:
        return values.dtype
    return staging.narrow_dtype(name, values)


def _allocate(run: _Run) -> None:
    """The kept device arrays and pinned host buffers of this batch's sizes."""
    batch, d, host, kept = run.batch, run.d, run.host, run.kept
    n_carts, n_lines, n_merch = batch.n_carts, batch.line_qty.size, int(batch.merch_ptr[-1])
    for name in (*LEVEL, *PARAMS):
        values = getattr(batch, name)
        dtype = _dtype(run, name)
        d[name] = _kept(kept, name, values.size, dtype)
        host[name] = staging.pinned(f"overlap_{name}", values.size, dtype, kept=kept)
    for name, size, kind in (
        ("served", n_merch, np.int32),
        ("forced", n_merch, np.int32),
        ("skip", n_merch, np.int8),
        ("method", n_carts, np.int8),
        ("complexity", n_carts, np.int64),
        ("work", n_carts, np.int64),
        ("ws", n_carts, np.int64),
        ("pick", n_carts, np.int64),
        ("ws_ptr", n_carts + 1, np.int64),
        ("pick_ptr", n_carts + 1, np.int64),
        ("order", n_carts, np.int32),
        ("out_total", n_carts, np.int64),
        ("out_choice", n_lines, np.int64),
    ):
        d[name] = _kept(kept, f"plan_{name}", size, kind)
        host[name] = staging.pinned(f"overlap_plan_{name}", size, kind, kept=kept)
    # The pruning's scratch and what it leaves for the solve stay on the device.
    for name, size in (
        ("sub", n_merch),
        ("units", n_merch),
        ("slack", n_merch),
        ("line_v", n_lines),
        ("offer_end", n_lines),
        ("bound", n_carts),
    ):
        d[name] = _kept(kept, f"plan_{name}", size, np.int64)
    host["ws_ptr"][0] = 0
    host["pick_ptr"][0] = 0
    # The answers and the plan, in arrays of the caller's (the pinned ones serve every batch).
    for name in ("method", "complexity", "work", "skip", "ws_ptr", "pick_ptr", "out_total"):
        run.out[name] = np.empty(host[name].size, dtype=host[name].dtype)
    run.out["out_choice"] = np.empty(n_lines, dtype=np.int64)


def _range(run: _Run, k: int, level: str) -> tuple[int, int]:
    """Chunk ``k``'s slice of an array of ``level`` (pointer arrays: see the module)."""
    batch = run.batch
    lo, hi = int(run.bounds[k]), int(run.bounds[k + 1])
    if level.startswith("cart"):
        a, b = lo, hi
    elif level.startswith("line"):
        a, b = int(batch.line_ptr[lo]), int(batch.line_ptr[hi])
    elif level == "offer":
        lines = batch.line_ptr[lo], batch.line_ptr[hi]
        a, b = int(batch.offer_ptr[lines[0]]), int(batch.offer_ptr[lines[1]])
    else:
        a, b = int(batch.merch_ptr[lo]), int(batch.merch_ptr[hi])
    if level.endswith("+1"):
        return (0 if k == 0 else a + 1), b + 1
    return a, b


def _copy_in(run: _Run, name: str, values: np.ndarray, a: int, b: int, stream) -> None:
    if b <= a:
        return
    target = run.host[name][a:b]
    if not staging.cast_into(values[a:b], target):
        raise _Wide(name)
    run.d[name][a:b].copy_to_device(target, stream=stream)


def _upload_chunk(run: _Run, k: int, stream, previous):
    """Chunk ``k``'s slices cast into the pinned buffers and queued on ``stream`` after the
    previous chunk's copies (``previous``, an event); the event of these copies."""
    if previous is not None:
        previous.wait(stream)
    if k == 0:
        for name in PARAMS:
            values = getattr(run.batch, name)
            _copy_in(run, name, values, 0, values.size, stream)
    for name, level in LEVEL.items():
        _copy_in(run, name, getattr(run.batch, name), *_range(run, k, level), stream)
    event = cuda.event()
    event.record(stream)
    return event


def _plan_chunk(run: _Run, k: int, stream, prefer: int, max_work: int, prune: bool | int):
    """The plan kernel over chunk ``k``'s carts and the copy back of its plan, on ``stream``;
    the event of that copy."""
    d = run.d
    lo, hi = int(run.bounds[k]), int(run.bounds[k + 1])
    threads = batch_cuda.SIMULATOR_THREADS if simulator_enabled() else batch_cuda.PLAN_THREADS
    if hi > lo:
        batch_cuda.get_plan_kernel()[-(-(hi - lo) // threads), threads, stream](
            np.int64(lo),
            np.int64(hi),
            *CartArrays.of(d),
            np.int64(max_work),
            np.int64(prefer),
            np.int64(prune),
            *PlanArrays.of(d),
        )
    for name, level in PLAN_OUT:
        a, b = _range(run, k, level)
        if b > a:
            d[name][a:b].copy_to_host(run.host[name][a:b], stream=stream)
    event = cuda.event()
    event.record(stream)
    return event


def _solve_chunk(run: _Run, k: int, streams: list, previous):
    """Chunk ``k``'s scratch offsets and heavy order (its plan is back) copied after the
    previous chunk's (``previous``), its launches (tiers on ``streams[1:]``, the light carts
    on ``streams[0]``) and the copy back of its answers; the events of the offsets' copy and
    of the answers' copy."""
    d, host = run.d, run.host
    lo, hi = int(run.bounds[k]), int(run.bounds[k + 1])
    for name in ("ws", "pick"):
        ptr = host[f"{name}_ptr"]
        np.cumsum(host[name][lo:hi], out=ptr[lo + 1 : hi + 1])
        ptr[lo + 1 : hi + 1] += ptr[lo]
    work = host["work"][lo:hi]
    heavy = np.flatnonzero(work >= batch_cuda.TIERS[-1][0])
    order = lo + heavy[np.argsort(-work[heavy], kind="stable")]
    h0 = run.heavy
    host["order"][h0 : h0 + order.size] = order
    run.heavy += order.size
    u = streams[0]
    if previous is not None:
        previous.wait(u)
    for name in ("ws_ptr", "pick_ptr"):
        a, b = (0 if k == 0 else lo + 1), hi + 1
        d[name][a:b].copy_to_device(host[name][a:b], stream=u)
    if order.size:
        d["order"][h0 : h0 + order.size].copy_to_device(host["order"][h0 : h0 + order.size], u)
    ready = cuda.event()
    ready.record(u)
    chunk = {
        **d,
        "ws": _scratch(run, "ws", host["ws_ptr"], lo, hi, np.int64),
        "pick": _scratch(run, "pick", host["pick_ptr"], lo, hi, np.uint16),
    }
    finished = _launch(run, chunk, lo, hi, h0, work[order - lo], streams, ready)
    for event in finished:
        event.wait(u)
    d["out_total"][lo:hi].copy_to_host(host["out_total"][lo:hi], stream=u)
    a, b = _range(run, k, "line")
    if b > a:
        d["out_choice"][a:b].copy_to_host(host["out_choice"][a:b], stream=u)
    answers = cuda.event()
    answers.record(u)
    # The host waits for the GPU from here on: the chunk's plan goes to the caller's arrays.
    for name, level in (*PLAN_OUT[:3], ("skip", "merchant"), ("ws_ptr", "cart+1")):
        a, b = _range(run, k, level)
        run.out[name][a:b] = host[name][a:b]
    a, b = _range(run, k, "cart+1")
    run.out["pick_ptr"][a:b] = host["pick_ptr"][a:b]
    return ready, answers


def _collect(run: _Run, k: int) -> None:
    """Chunk ``k``'s answers (back in the pinned buffers) into the caller's arrays."""
    for name, level in (("out_total", "cart"), ("out_choice", "line")):
        a, b = _range(run, k, level)
        run.out[name][a:b] = run.host[name][a:b]


def _scratch(run: _Run, name: str, ptr: np.ndarray, lo: int, hi: int, dtype):
    """Device scratch for carts ``lo .. hi - 1`` from the entry at ``ptr[lo]``: the kept
    scratch when it reaches ``ptr[hi]``, else an array of this chunk's own."""
    base, end = int(ptr[lo]), int(ptr[hi])
    held = run.kept.scratch.get(name)
    if held is not None and end <= held.size:
        return held[min(base, held.size - 1) :]
    nbytes = max(1, end - base) * np.dtype(dtype).itemsize
    run.fresh_bytes += nbytes
    if run.fresh_bytes > run.limit:
        raise _TooBig
    fresh = cuda.device_array(max(1, end - base), dtype=dtype)
    run.keep_alive.append(fresh)
    return fresh


def _launch(run, chunk: dict, lo: int, hi: int, h0: int, heavy_work, streams, ready) -> list:
    """The tier launches of the chunk's heavy carts (``order[h0 ..]``, heaviest first, each
    tier on its own stream of ``streams[1:]``, after ``ready``) and the light launch over
    ``lo .. hi - 1`` on ``streams[0]``; the events the tiers' streams record when done."""
    args = batch_cuda.solve_kernel_args(chunk)
    finished = []
    start = 0
    for i, (tier_floor, tier_threads) in enumerate(batch_cuda.TIERS):
        stop = start + int(np.count_nonzero(heavy_work[start:] >= tier_floor))
        if stop > start:
            call = (np.int64(h0 + start), np.int64(lo), chunk["order"], chunk["work"])
            call = (*call, np.int64(0), *args)
            kernel, threads = _tier_kernel(run, chunk, call, tier_floor, tier_threads)
            stream = streams[1 + i]
            ready.wait(stream)
            kernel[stop - start, threads, stream](*call)
            event = cuda.event()
            event.record(stream)
            finished.append(event)
            run.timings["launches"] = run.timings.get("launches", 0) + 1
            key = f"tier_{tier_floor}_carts"
            run.timings[key] = run.timings.get(key, 0) + stop - start
        start = stop
    floor = batch_cuda.TIERS[-1][0]
    call = (np.int64(lo), np.int64(lo), chunk["order"], chunk["work"], np.int64(floor), *args)
    light = batch_cuda.get_solve_kernel(chunk, batch_cuda.THREADS, batch_cuda.LIGHT)
    threads = batch_cuda.SIMULATOR_THREADS if simulator_enabled() else 32
    if hi > lo:
        light[hi - lo, threads, streams[0]](*call)
        run.timings["launches"] = run.timings.get("launches", 0) + 1
    return finished


def _tier_kernel(run: _Run, chunk: dict, call: tuple, tier_floor: int, tier_threads: int):
    """The tier's kernel compiled for ``call``'s types and its block size, once a batch."""
    if tier_floor not in run.kernels:
        shared = min(tier_threads, 1024)
        kernel = batch_cuda.get_solve_kernel(chunk, shared, batch_cuda.INDEXED)
        kernel = batch_cuda.specialized(kernel, call, run.timings, f"tier_{tier_floor}")
        threads = batch_cuda.block_threads(kernel, shared)
        run.timings[f"tier_{tier_floor}_threads"] = threads
        run.kernels[tier_floor] = (kernel, threads)
    return run.kernels[tier_floor]
