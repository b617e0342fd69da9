"""The GPU batch's launch variants that only benchmarks run, beside the ones production picks
from (:data:`gpu_engine.batch.gpu.VARIANTS`): "baseline" (pageable int64 copies, scratch of
its own each batch, range launches), and "split"/"split256" (the heaviest carts first on blocks
of up to 1024 or 256 threads, the light carts on 64-thread blocks). None changes an answer.
"""

from __future__ import annotations

from gpu_engine.batch.cuda import THREADS
from gpu_engine.batch.gpu import VARIANTS as PRODUCTION_VARIANTS
from gpu_engine.batch.launch import Launch

BASELINE = Launch("baseline", pinned=False)
SPLIT = Launch("split", split=(1024, THREADS))
SPLIT256 = Launch("split256", split=(256, THREADS))
# Every variant, in the order the benchmarks and the equality tests run them.
VARIANTS: tuple[str | Launch, ...] = (
    BASELINE,
    "pinned",
    SPLIT,
    SPLIT256,
    "split-warp",
    "overlap",
)
_BENCH_ONLY = {launch.name: launch for launch in (BASELINE, SPLIT, SPLIT256)}


def variant_named(name: str) -> str | Launch:
    """The variant a benchmark's command line names (as ``gpu_engine.batch.solve_packed``'s
    ``gpu_variant`` takes it)."""
    if name in PRODUCTION_VARIANTS:
        return name
    if name in _BENCH_ONLY:
        return _BENCH_ONLY[name]
    names = (*PRODUCTION_VARIANTS, *_BENCH_ONLY)
    raise ValueError(f"GPU variant must be one of {names}, got {name!r}")


def variant_name(variant: str | Launch) -> str:
    return variant if isinstance(variant, str) else variant.name
