"""The GPU batch's host entry: picks how the batch reaches the device and runs it.

:mod:`gpu_engine.batch.cuda` holds the kernels and the launch variants that copy the whole batch
first; :mod:`gpu_engine.batch.overlap` runs the same launches chunk by chunk behind their copies
and builds on the first. This module sits above both so neither imports the other's caller.
"""

from __future__ import annotations

import numpy as np

from gpu_engine.batch import cuda as batch_cuda
from gpu_engine.batch.overlap import solve_overlap
from gpu_engine.batch.pack import MAX_WORK, BatchPlan, PackedBatch


def solve_gpu(
    batch: PackedBatch,
    *,
    prefer: int | None = None,
    max_work: int = MAX_WORK,
    timings: dict[str, float] | None = None,
    variant: str | None = None,
) -> tuple[np.ndarray, np.ndarray, BatchPlan]:
    """(total per cart, cart-local merchant per line, the plan) on the GPU, by ``variant``
    (:data:`gpu_engine.batch.cuda.VARIANTS`; None: the measured-fastest for the batch's size,
    :func:`gpu_engine.batch.cuda.default_variant`). The variant never changes an answer."""
    if variant is None:
        variant = batch_cuda.default_variant(batch.n_carts)
    if variant == "overlap" and batch.n_carts > 0:
        timings = {} if timings is None else timings
        return solve_overlap(
            batch, prefer=-1 if prefer is None else prefer, max_work=max_work, timings=timings
        )
    if variant == "overlap":
        variant = batch_cuda.SMALL_BATCH_VARIANT
    return batch_cuda.solve_gpu(
        batch, prefer=prefer, max_work=max_work, timings=timings, variant=variant
    )
