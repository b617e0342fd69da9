"""One batch of carts spread over several GPUs of this host.

The carts are cut into contiguous *chunks* of decreasing estimated work (guided scheduling:
:func:`guided_cuts`), and each device's host thread takes the next chunk not yet taken until
none is left, so the work a device gets follows the time it really spends. A plan's predicted
steps did not match time (measured on four H100s: two shares cut by predicted work took 1.42x
where 2x was due), and the estimate here only sizes the chunks: a cart's offers times two to
the power of its free lines (the exact methods' state space grows that way), plus a block's
worth of fixed cost. Each chunk is sliced out of the packed arrays (rebased CSR offsets, only
the pricing rows it uses) and solved by :func:`gpu_engine.batch.engine.solve_packed` inside
``cuda.gpus[device_id]``, so each thread launches on its own device's context; the answers are
concatenated in cart order.

Every cart's plan and answer depend on that cart alone (its lines, offers and merchants; a
cart's scratch offsets are relative to its launch), so the merged answers equal one device's
answers bit for bit, whatever the split. The same id may repeat (two threads on one card),
which is how the split is exercised with a single GPU.

Each chunk runs the variant the engine picks for its size
(:func:`gpu_engine.batch.gpu.default_variant`), as one device would: what the GPU batch keeps
between batches (DP scratch, the "overlap" arrays and streams, pinned buffers) is kept per
device with a lock per device (:mod:`gpu_engine.batch.kept`), so chunks on different GPUs run
at once on buffers of their own, and chunks on the same GPU take turns on its buffers.

numba's parallel host code (the chunks' casts into pinned buffers) runs a thread team per
calling thread; two share threads each with the caller's full team (every core) ran 500k carts
each as slowly as one GPU ran 1M. So each device thread uses its share of the caller's count,
``max(1, numba.get_num_threads() // devices)`` (thread-local, so the caller's count is
unchanged; :mod:`gpu_engine.batch.threads`).

In the CUDA simulator the chunks run one after the other: the simulator swaps module globals
while a kernel runs, so two host threads cannot launch at once there.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np

from gpu_engine.batch.answers import build_solutions
from gpu_engine.batch.engine import (
    BatchResult,
    RawAnswers,
    resolve_batch_device,
    solve_mixed,
    solve_packed,
)
from gpu_engine.batch.pack import BatchPlan, PackedBatch, csr_offsets, pack_problems
from gpu_engine.batch.threads import threads_limited
from gpu_engine.device import simulator_enabled
from gpu_engine.problem import CartProblem

# A cart's fixed cost in plan steps: one block of 64 threads launched, its lines read, its
# answer written, even when it prices a single assignment.
CART_OVERHEAD = 64
# Guided chunks: each chunk is this share of the work left divided by the device count, so the
# first launches are large (a quarter of the batch on two GPUs) and the last ones small enough
# to even out the devices' finishing times ...
GUIDED_SHARE = 0.5
# ... but never below this share of the whole divided by the device count.
MIN_CHUNK_SHARE = 1 / 16
# The estimate's exponent stops here (the exact methods refuse larger carts anyway).
MAX_ESTIMATE_FREE_LINES = 24

ShareSolver = Callable[[PackedBatch, int], RawAnswers]


def solve_share_on_gpu(share: PackedBatch, device_id: int) -> RawAnswers:
    """The default share solver: the batch kernel on GPU ``device_id`` (its context made
    current in the calling thread for the duration), by the variant the engine picks for the
    share's size."""
    from numba import cuda

    with cuda.gpus[device_id]:
        return solve_packed(share, device="gpu")


@overload
def solve_batch_multi(
    problems_or_packed: PackedBatch,
    *,
    device_ids: Sequence[int],
    share_solver: ShareSolver | None = None,
) -> RawAnswers: ...


@overload
def solve_batch_multi(
    problems_or_packed: Sequence[CartProblem],
    *,
    device_ids: Sequence[int],
    share_solver: ShareSolver | None = None,
) -> BatchResult: ...


def solve_batch_multi(
    problems_or_packed: PackedBatch | Sequence[CartProblem],
    *,
    device_ids: Sequence[int],
    share_solver: ShareSolver | None = None,
) -> RawAnswers | BatchResult:
    """Exact answers of every cart, the batch split over ``device_ids`` (one host thread and
    one share each). A :class:`PackedBatch` gives :class:`RawAnswers` (arrays); problems give
    a :class:`BatchResult` (Solutions, None for carts too large), as ``solve_batch`` does.
    ``share_solver(share, device_id)`` replaces the GPU (tests pass the CPU twin)."""
    if isinstance(problems_or_packed, PackedBatch):
        return solve_packed_multi(
            problems_or_packed, device_ids=device_ids, share_solver=share_solver
        )
    problems = problems_or_packed
    t0 = time.perf_counter()
    if not all(p.simple for p in problems):
        # Version 2 carts are few (the price watch's fallback): one search on this host's
        # current device (the CPU twin when a share solver stands in for the GPUs).
        where = "cpu" if share_solver is not None else resolve_batch_device("auto")
        return solve_mixed(
            problems,
            where=where,
            solve_simple=lambda part: solve_batch_multi(
                part, device_ids=device_ids, share_solver=share_solver
            ),
            t0=t0,
        )
    batch = pack_problems(problems)
    answers = solve_packed_multi(batch, device_ids=device_ids, share_solver=share_solver)
    solutions = build_solutions(
        problems,
        batch,
        answers.plan.method,
        answers.total,
        answers.choice,
        device=answers.device,
        batch_ms=(time.perf_counter() - t0) * 1e3,
    )
    return BatchResult(
        solutions=solutions, device=answers.device, elapsed_ms=(time.perf_counter() - t0) * 1e3
    )


def solve_packed_multi(
    batch: PackedBatch,
    *,
    device_ids: Sequence[int],
    share_solver: ShareSolver | None = None,
) -> RawAnswers:
    """:func:`solve_batch_multi` on packed carts. ``timings``: ``split_ms`` (the estimate and
    the cuts; none for a single device), ``chunks``, ``shares_ms`` (all threads, wall), per
    device thread ``share<i>_ms`` (its busy time) / ``share<i>_carts`` / ``share<i>_chunks``,
    and ``merge_ms``."""
    ids = list(device_ids)
    if not ids:
        raise ValueError("device_ids must name at least one device")
    solver = share_solver or solve_share_on_gpu
    if share_solver is None:
        _driver_ready()
    t0 = time.perf_counter()
    if len(ids) == 1 or batch.n_carts == 0:  # nothing to balance: one launch
        cuts = np.array([0, batch.n_carts], dtype=np.int64)
    else:
        cuts = guided_cuts(estimated_work(batch), len(ids))
    t1 = time.perf_counter()
    chunks = [(int(lo), int(hi)) for lo, hi in itertools.pairwise(cuts)]
    run = _run_chunks(batch, chunks, ids, solver, sequential=_sequential(share_solver))
    t2 = time.perf_counter()
    merged = merge_answers(run.results)
    timings = dict(merged.timings)
    for slot in range(len(ids)):
        timings[f"share{slot}_ms"] = run.busy_ms[slot]
        timings[f"share{slot}_carts"] = float(run.carts[slot])
        timings[f"share{slot}_chunks"] = float(run.chunks[slot])
    timings.update(
        split_ms=(t1 - t0) * 1e3,
        chunks=float(len(chunks)),
        shares_ms=(t2 - t1) * 1e3,
        merge_ms=(time.perf_counter() - t2) * 1e3,
    )
    return RawAnswers(
        total=merged.total,
        choice=merged.choice,
        plan=merged.plan,
        device=merged.device,
        timings=timings,
    )


def guided_cuts(work: np.ndarray, n_devices: int) -> np.ndarray:
    """Cart offsets (from 0 to the cart count, increasing) cutting the carts into contiguous
    chunks of decreasing work (``work`` per cart plus :data:`CART_OVERHEAD`): each
    :data:`GUIDED_SHARE` of the work left over ``n_devices``, at least :data:`MIN_CHUNK_SHARE`
    of the whole over ``n_devices``, and at least one cart."""
    n = work.size
    if n == 0:
        return np.zeros(1, dtype=np.int64)
    weight = np.cumsum(work.astype(np.float64) + CART_OVERHEAD)
    total = float(weight[-1])
    floor = total * MIN_CHUNK_SHARE / n_devices
    cuts = [0]
    done = 0.0
    while cuts[-1] < n:
        size = max((total - done) * GUIDED_SHARE / n_devices, floor)
        end = int(np.searchsorted(weight, done + size, side="left")) + 1
        end = min(max(end, cuts[-1] + 1), n)
        cuts.append(end)
        done = float(weight[end - 1])
    return np.asarray(cuts, dtype=np.int64)


def _driver_ready() -> None:
    """The CUDA driver initialised in the calling thread before the device threads start:
    numba initialises it lazily, and two threads doing so at once in a fresh process met
    CUDA_ERROR_NOT_INITIALIZED (cuDeviceGetCount) on a 2-GPU H100 host."""
    from numba import cuda

    len(cuda.gpus)


def estimated_work(batch: PackedBatch) -> np.ndarray:
    """Per cart: its offers times 2 ** (its lines with two or more offers), from the packed
    offsets alone (no plan on the host)."""
    offers_per_line = np.diff(batch.offer_ptr)
    line_starts = batch.line_ptr[:-1]
    n_lines = np.diff(batch.line_ptr)
    if offers_per_line.size == 0:
        return np.zeros(batch.n_carts, dtype=np.float64)
    safe = np.minimum(line_starts, offers_per_line.size - 1)
    offers = np.where(n_lines > 0, np.add.reduceat(offers_per_line, safe), 0)
    free = np.where(n_lines > 0, np.add.reduceat((offers_per_line > 1).astype(np.int64), safe), 0)
    free = np.minimum(free, MAX_ESTIMATE_FREE_LINES)
    return offers.astype(np.float64) * np.exp2(free.astype(np.float64))


def _sequential(share_solver: ShareSolver | None) -> bool:
    # Only the simulator's kernels must not overlap; a CPU share solver may run in threads.
    return share_solver is None and simulator_enabled()


def share_cuts(work: np.ndarray, n_shares: int) -> np.ndarray:
    """``n_shares + 1`` cart offsets (from 0 to the cart count, non-decreasing) cutting the
    carts into contiguous shares of about equal work (``work`` per cart, predicted steps or an
    estimate, plus :data:`CART_OVERHEAD`)."""
    n = work.size
    weight = np.cumsum(work.astype(np.float64) + CART_OVERHEAD)
    total = float(weight[-1]) if n else 0.0
    targets = total * np.arange(1, n_shares) / n_shares
    # The first cart whose running sum reaches a target ends its share or opens the next one,
    # whichever leaves the share nearer the target (a heavy cart must not pull two together).
    first = np.minimum(np.searchsorted(weight, targets, side="left"), max(n - 1, 0))
    prefix = np.concatenate(([0.0], weight))
    after = prefix[np.minimum(first + 1, n)] if n else targets
    before = prefix[first] if n else targets
    inner = np.where(after - targets <= targets - before, first + 1, first)
    inner = np.maximum.accumulate(np.minimum(inner, n)) if n else np.zeros_like(first)
    return np.concatenate(([0], inner, [n])).astype(np.int64)


def slice_batch(batch: PackedBatch, lo: int, hi: int) -> PackedBatch:
    """Carts ``lo .. hi - 1`` as a batch of their own: offsets rebased to 0, and only the
    contiguous span of pricing rows its merchants use (a merchant pool stays whole; one row
    per merchant, as :func:`pack_problems` makes, is cut to the share's rows)."""
    l0, l1 = int(batch.line_ptr[lo]), int(batch.line_ptr[hi])
    o0, o1 = int(batch.offer_ptr[l0]), int(batch.offer_ptr[l1])
    m0, m1 = int(batch.merch_ptr[lo]), int(batch.merch_ptr[hi])
    rows = batch.merch_row[m0:m1]
    r0, r1 = (int(rows.min()), int(rows.max()) + 1) if rows.size else (0, 0)
    return PackedBatch(
        line_ptr=batch.line_ptr[lo : hi + 1] - l0,
        line_qty=batch.line_qty[l0:l1],
        offer_ptr=batch.offer_ptr[l0 : l1 + 1] - o0,
        offer_merchant=batch.offer_merchant[o0:o1],
        offer_amount=batch.offer_amount[o0:o1],
        merch_ptr=batch.merch_ptr[lo : hi + 1] - m0,
        merch_row=(rows - r0).astype(np.int32),
        base=batch.base[r0:r1],
        extra=batch.extra[r0:r1],
        free_over=batch.free_over[r0:r1],
        dmin=batch.dmin[r0:r1],
        dbp=batch.dbp[r0:r1],
        merchant_index=batch.merchant_index[m0:m1],
    )


@dataclass
class _ChunkRun:
    """Each chunk's answers in cart order, and per device thread its busy time, carts and
    chunks."""

    results: list[RawAnswers]
    busy_ms: list[float]
    carts: list[int]
    chunks: list[int]


def _run_chunks(
    batch: PackedBatch,
    chunks: list[tuple[int, int]],
    ids: list[int],
    solver: ShareSolver,
    *,
    sequential: bool,
) -> _ChunkRun:
    """Every chunk solved by ``solver`` on some device: one host thread per entry of ``ids``
    takes the next untaken chunk until none is left (or, ``sequential``, the caller's thread
    deals them out in turn). A device thread runs numba's parallel code on its share of the
    caller's host threads."""
    import numba

    results: list[RawAnswers | BaseException | None] = [None] * len(chunks)
    busy = [0.0] * len(ids)
    carts = [0] * len(ids)
    taken = [0] * len(ids)
    following = itertools.count()
    take_lock = threading.Lock()

    def solve_chunk(slot: int, index: int) -> None:
        lo, hi = chunks[index]
        t0 = time.perf_counter()
        try:
            results[index] = solver(slice_batch(batch, lo, hi), ids[slot])
        except BaseException as exc:  # re-raised in the caller's thread
            results[index] = exc
        busy[slot] += (time.perf_counter() - t0) * 1e3
        carts[slot] += hi - lo
        taken[slot] += 1

    def device_loop(slot: int, count: int) -> None:
        with threads_limited(count):
            while True:
                with take_lock:
                    index = next(following)
                if index >= len(chunks) or _failed(results):
                    return
                solve_chunk(slot, index)

    if sequential or len(ids) == 1:
        for index in range(len(chunks)):
            solve_chunk(index % len(ids), index)
    else:
        per_device = max(1, numba.get_num_threads() // len(ids))
        threads = [
            threading.Thread(target=device_loop, args=(slot, per_device), name=f"batch-gpu-{slot}")
            for slot in range(len(ids))
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    for result in results:
        if isinstance(result, BaseException):
            raise result
    done = [result for result in results if isinstance(result, RawAnswers)]
    assert len(done) == len(chunks), "every chunk is solved unless one failed"
    return _ChunkRun(done, busy, carts, taken)


def _failed(results: list[RawAnswers | BaseException | None]) -> bool:
    return any(isinstance(result, BaseException) for result in results)


def merge_answers(parts: list[RawAnswers]) -> RawAnswers:
    """The shares' answers and plans concatenated in cart order (scratch offsets re-summed;
    per-line choices and per-merchant flags are share-local already, so they just append).
    ``timings``: each share's phase times summed (device time, not wall)."""
    plans = [p.plan for p in parts]
    timings: dict[str, float] = {}
    for part in parts:
        for key, value in part.timings.items():
            timings[key] = timings.get(key, 0.0) + float(value)
    devices = sorted({p.device for p in parts})
    return RawAnswers(
        total=np.concatenate([p.total for p in parts]),
        choice=np.concatenate([p.choice for p in parts]),
        plan=BatchPlan(
            method=np.concatenate([p.method for p in plans]),
            complexity=np.concatenate([p.complexity for p in plans]),
            work=np.concatenate([p.work for p in plans]),
            ws_ptr=csr_offsets(np.concatenate([np.diff(p.ws_ptr) for p in plans])),
            pick_ptr=csr_offsets(np.concatenate([np.diff(p.pick_ptr) for p in plans])),
            skip=np.concatenate([p.skip for p in plans]),
        ),
        device="+".join(devices),
        timings=timings,
    )
