"""Many carts solved exactly in one batch (issue 14's price watch).

``solve_batch(problems, device="auto")`` packs the carts into CSR arrays
(:mod:`gpu_engine.batch.pack`), chooses per cart the cheaper exact method (full search or the
merchant subset DP; carts too large for both come back as None) and runs them all at once: one
block per cart on the GPU (:mod:`gpu_engine.batch.cuda`), one ``prange`` iteration per cart on
the CPU twin (:mod:`gpu_engine.batch.cpu`). ``device="auto"`` uses the GPU only when
``cuda.is_available()`` at run time; nothing here touches CUDA at import time.
"""

from gpu_engine.batch.answers import price_choice
from gpu_engine.batch.engine import BatchResult, RawAnswers, solve_batch, solve_packed
from gpu_engine.batch.pack import PackedBatch, pack_problems, plan_batch

__all__ = [
    "BatchResult",
    "PackedBatch",
    "RawAnswers",
    "pack_problems",
    "plan_batch",
    "price_choice",
    "solve_batch",
    "solve_packed",
]
