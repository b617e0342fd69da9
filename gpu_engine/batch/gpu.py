"""The GPU batch's host entry: picks how the batch reaches the device and runs it.

:mod:`gpu_engine.batch.launch` copies the whole batch first, then launches;
:mod:`gpu_engine.batch.overlap` runs the same launches chunk by chunk behind their copies and
builds on the first. This module sits above both so neither imports the other's caller.

"overlap" hides the copy in (a host cast, then the bus) behind the kernels, but below
:data:`OVERLAP_MIN_CARTS` its chunks are too small to hide the cast and "split-warp" is faster
(the measured crossover, BENCHMARKS.md); the default picks between them by batch size.
"""

from __future__ import annotations

import numpy as np

from gpu_engine.batch.launch import PINNED, SPLIT_WARP, Launch, solve_whole
from gpu_engine.batch.overlap import solve_overlap
from gpu_engine.batch.pack import MAX_WORK, BatchPlan, PackedBatch

# The variants production picks from (benchmarks add others: gpu_engine.bench.batch_variants).
VARIANTS = ("pinned", "split-warp", "overlap")
DEFAULT_VARIANT = "overlap"
SMALL_BATCH_VARIANT = "split-warp"
OVERLAP_MIN_CARTS = 300_000
_LAUNCHES = {launch.name: launch for launch in (PINNED, SPLIT_WARP)}


def default_variant(n_carts: int) -> str:
    """The measured-fastest variant for a batch of ``n_carts``."""
    return DEFAULT_VARIANT if n_carts >= OVERLAP_MIN_CARTS else SMALL_BATCH_VARIANT


def solve_gpu(
    batch: PackedBatch,
    *,
    prefer: int | None = None,
    max_work: int = MAX_WORK,
    timings: dict[str, float] | None = None,
    variant: str | Launch | None = None,
    prune: bool | int = True,
) -> tuple[np.ndarray, np.ndarray, BatchPlan]:
    """(total per cart, cart-local merchant per line, the plan) on the GPU, by ``variant``: a
    name of :data:`VARIANTS` (None: :func:`default_variant` for the batch's size) or a
    :class:`Launch` of the whole-batch path. The variant never changes an answer; ``prune``:
    see :func:`gpu_engine.batch.pack.plan_batch`."""
    if variant is None:
        variant = default_variant(batch.n_carts)
    if isinstance(variant, str) and variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    if variant == "overlap" and batch.n_carts > 0:
        timings = {} if timings is None else timings
        return solve_overlap(
            batch,
            prefer=-1 if prefer is None else prefer,
            max_work=max_work,
            timings=timings,
            prune=prune,
        )
    if variant == "overlap":
        variant = SMALL_BATCH_VARIANT
    launch = _LAUNCHES[variant] if isinstance(variant, str) else variant
    return solve_whole(
        batch, launch, prefer=prefer, max_work=max_work, timings=timings, prune=prune
    )
