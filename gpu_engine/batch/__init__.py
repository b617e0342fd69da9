"""Many carts solved exactly in one batch (the price watch).

``solve_batch(problems, device="auto")`` packs the carts into CSR arrays (:func:`pack_carts`,
the one builder of the format: :mod:`gpu_engine.batch.pack`), chooses per cart the cheaper exact
method (full search or the merchant subset DP; carts too large for both come back as None) and
runs them all at once: one block per cart on the GPU (:mod:`gpu_engine.batch.cuda`), one
``prange`` iteration per cart on the CPU twin (:mod:`gpu_engine.batch.cpu`). Version 2 carts
(a merchant's several nodes, parcel rates by weight) go as a sub-batch of their own to the exact
full search over columns (:mod:`gpu_engine.batch.v2`); ``solve_batch`` merges both in cart
order, and ``pack_problems``/``solve_packed`` stay the simple carts' format. ``device="auto"``
uses the GPU only when ``cuda.is_available()`` at run time; nothing here touches CUDA at import
time. The names below are the apps' way in.
"""

from gpu_engine.batch.answers import price_choice
from gpu_engine.batch.engine import BatchResult, RawAnswers, solve_batch, solve_packed
from gpu_engine.batch.multi import slice_batch, solve_batch_multi
from gpu_engine.batch.pack import (
    METHOD_NAMES,
    TOO_LARGE,
    PackedBatch,
    pack_carts,
    pack_problems,
    plan_batch,
)
from gpu_engine.batch.synthetic import synthetic_batch
from gpu_engine.batch.threads import host_threads_apply

__all__ = [
    "METHOD_NAMES",
    "TOO_LARGE",
    "BatchResult",
    "PackedBatch",
    "RawAnswers",
    "host_threads_apply",
    "pack_carts",
    "pack_problems",
    "plan_batch",
    "price_choice",
    "slice_batch",
    "solve_batch",
    "solve_batch_multi",
    "solve_packed",
    "synthetic_batch",
]
