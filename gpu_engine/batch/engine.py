"""The batch solver's host side: plan, run on the CPU twin or the GPU, unpack into Solutions."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numba
import numpy as np

from gpu_engine.batch.answers import build_solutions, build_v2_solutions
from gpu_engine.batch.pack import (
    BatchPlan,
    PackedBatch,
    pack_problems,
    plan_batch,
)
from gpu_engine.batch.threads import PARALLEL_MIN_CARTS, PARALLEL_MIN_STEPS
from gpu_engine.batch.v2 import solve_v2
from gpu_engine.problem import CartProblem
from gpu_engine.solution import Solution

if TYPE_CHECKING:
    from gpu_engine.batch.launch import Launch

# Scratch (DP tables) the CPU twin may hold at once; larger batches run in several ranges,
# which reuse it (a smaller range faults fewer fresh pages in: the pushed DP touches its
# tables sparsely; a larger one balances its threads better).
CPU_SCRATCH = 128 << 20
# Scratch a thread keeps between batches (see _kept_scratch).
KEEP_CPU_SCRATCH = 64 << 20
_cpu_kept = threading.local()


@dataclass
class BatchResult:
    """``solutions[i]`` answers ``problems[i]``; None = too large for the batch (the caller
    uses the normal planner). ``device``: "cpu" or "gpu", where the batch ran."""

    solutions: list[Solution | None]
    device: str
    elapsed_ms: float


@dataclass(frozen=True, eq=False)
class RawAnswers:
    """Per cart ``total`` (-1 when too large) and per packed line the cart-local merchant."""

    total: np.ndarray
    choice: np.ndarray
    plan: BatchPlan
    device: str
    timings: dict[str, float]


def resolve_batch_device(device: str) -> str:
    """ "cpu" or "gpu". "auto" asks ``cuda.is_available()`` now, at run time (a real GPU only,
    never the simulator); "gpu" is taken as given, so tests can run the kernel in the
    simulator."""
    if device == "cpu":
        return "cpu"
    if device == "gpu":
        return "gpu"
    if device != "auto":
        raise ValueError(f"device must be 'auto', 'cpu' or 'gpu', got {device!r}")
    from gpu_engine.device import simulator_enabled

    if simulator_enabled():
        return "cpu"
    try:
        from numba import cuda

        return "gpu" if cuda.is_available() else "cpu"
    except Exception:  # a broken driver or toolkit means no GPU, not a failed batch
        return "cpu"


def solve_packed(
    batch: PackedBatch,
    *,
    device: str = "auto",
    prefer: int | None = None,
    gpu_variant: str | Launch | None = None,
    prune: bool | int = True,
) -> RawAnswers:
    """Exact answers of a packed batch as arrays (no Python object per cart). ``prefer`` and
    ``prune``: see :func:`gpu_engine.batch.pack.plan_batch` (totals never depend on them);
    ``gpu_variant``: how the GPU path moves and launches the work
    (:func:`gpu_engine.batch.gpu.solve_gpu`; None: its default), for benchmarks that compare
    them; answers never depend on it."""
    where = resolve_batch_device(device)
    timings: dict[str, float] = {}
    if where == "gpu":
        from gpu_engine.batch.gpu import solve_gpu

        total, choice, plan = solve_gpu(
            batch, prefer=prefer, timings=timings, variant=gpu_variant, prune=prune
        )
        return RawAnswers(total=total, choice=choice, plan=plan, device=where, timings=timings)
    t0 = time.perf_counter()
    with _threads(batch.n_carts >= PARALLEL_MIN_CARTS):
        plan = plan_batch(batch, prefer=prefer, prune=prune)
    t1 = time.perf_counter()
    with _threads(int(plan.work.sum()) >= PARALLEL_MIN_STEPS):
        total, choice = _solve_cpu(batch, plan)
    timings.update(plan_ms=(t1 - t0) * 1e3, solve_ms=(time.perf_counter() - t1) * 1e3)
    return RawAnswers(total=total, choice=choice, plan=plan, device=where, timings=timings)


@contextmanager
def _threads(parallel: bool) -> Iterator[None]:
    """All of numba's threads when ``parallel``, else only the calling one."""
    if parallel:
        yield
        return
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(before)


def _solve_cpu(batch: PackedBatch, plan: BatchPlan) -> tuple[np.ndarray, np.ndarray]:
    from gpu_engine.batch.cpu import solve_range

    total = np.full(batch.n_carts, -1, dtype=np.int64)
    choice = np.full(batch.line_qty.size, -1, dtype=np.int64)
    chunks = plan.chunks(CPU_SCRATCH)
    ws_all = _kept_scratch(
        "ws",
        max(int(plan.ws_ptr[hi] - plan.ws_ptr[lo]) for lo, hi in chunks) if chunks else 0,
        np.int64,
    )
    pick_all = _kept_scratch(
        "pick",
        max(int(plan.pick_ptr[hi] - plan.pick_ptr[lo]) for lo, hi in chunks) if chunks else 0,
        np.uint16,
    )
    for lo, hi in chunks:
        ws = ws_all[: int(plan.ws_ptr[hi] - plan.ws_ptr[lo])]
        pick = pick_all[: int(plan.pick_ptr[hi] - plan.pick_ptr[lo])]
        solve_range(
            np.int64(lo),
            np.int64(hi),
            plan.method,
            plan.complexity,
            plan.ws_ptr,
            plan.pick_ptr,
            plan.skip,
            plan.bound,
            plan.fee_share,
            batch.line_ptr,
            batch.line_qty,
            batch.offer_ptr,
            plan.offer_end,
            plan.offer_merchant,
            plan.offer_amount,
            batch.merch_ptr,
            batch.merch_row,
            batch.params,
            ws,
            pick,
            total,
            choice,
        )
    return total, choice


def _kept_scratch(name: str, size: int, dtype: type) -> np.ndarray:
    """``size`` entries of the calling thread's kept scratch ``name`` (grown as needed, kept
    up to :data:`KEEP_CPU_SCRATCH` bytes): every range of a batch, and the thread's next
    batches, reuse the same pages instead of faulting fresh ones in (the pushed DP touches
    its tables sparsely, so fresh pages were a large share of a heavy cart's time)."""
    held = getattr(_cpu_kept, name, None)
    if held is not None and held.size >= size:
        return held
    fresh: np.ndarray = np.empty(max(1, size), dtype=dtype)
    if fresh.nbytes <= KEEP_CPU_SCRATCH:
        setattr(_cpu_kept, name, fresh)
    return fresh


def solve_batch(problems: Sequence[CartProblem], *, device: str = "auto") -> BatchResult:
    """Exact cheapest assignment of every cart of ``problems`` in one batch (CSR packing, one
    block per cart on the GPU, one ``prange`` iteration per cart on the CPU twin); carts too
    large for the batch's exact methods come back as None."""
    return solve_problems(problems, device=device)


def solve_problems(
    problems: Sequence[CartProblem], *, device: str = "auto", prefer: int | None = None
) -> BatchResult:
    """:func:`solve_batch` with the plan's ``prefer`` (tests run each method on every cart).
    Simple carts take the version 1 path; the others (several nodes a merchant, weight tiers)
    the version 2 full search (:mod:`gpu_engine.batch.v2`, which ignores ``prefer``); a mixed
    batch runs as the two sub-batches and answers in the problems' order."""
    t0 = time.perf_counter()
    if all(p.simple for p in problems):
        return _solve_simple(problems, device=device, prefer=prefer, t0=t0)
    where = resolve_batch_device(device)
    return solve_mixed(
        problems,
        where=where,
        solve_simple=lambda part: _solve_simple(part, device=where, prefer=prefer, t0=t0),
        t0=t0,
    )


def solve_mixed(
    problems: Sequence[CartProblem],
    *,
    where: str,
    solve_simple: Callable[[list[CartProblem]], BatchResult],
    t0: float,
) -> BatchResult:
    """A batch with version 2 carts as two sub-batches: the simple carts by ``solve_simple``
    (the version 1 path), the others by :func:`gpu_engine.batch.v2.solve_v2` on ``where``;
    the answers in the problems' order."""
    simple = [i for i, p in enumerate(problems) if p.simple]
    versioned = [i for i, p in enumerate(problems) if not p.simple]
    solutions: list[Solution | None] = [None] * len(problems)
    if simple:
        part = solve_simple([problems[i] for i in simple])
        for i, solution in zip(simple, part.solutions, strict=True):
            solutions[i] = solution
    v2_problems = [problems[i] for i in versioned]
    answers = solve_v2(v2_problems, where=where)
    v2_solutions = build_v2_solutions(
        v2_problems,
        answers.packed.line_ptr,
        answers.method,
        answers.total,
        answers.choice,
        device=where,
        batch_ms=(time.perf_counter() - t0) * 1e3,
        batch_size=len(problems),
    )
    for i, solution in zip(versioned, v2_solutions, strict=True):
        solutions[i] = solution
    return BatchResult(
        solutions=solutions, device=where, elapsed_ms=(time.perf_counter() - t0) * 1e3
    )


def _solve_simple(
    problems: Sequence[CartProblem], *, device: str, prefer: int | None, t0: float
) -> BatchResult:
    """The version 1 batch: simple carts packed as CSR, planned and solved by either method."""
    batch = pack_problems(problems)
    answers = solve_packed(batch, device=device, prefer=prefer)
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
