"""Types and lowers every batch and full-search kernel variant for an H100 (compute capability
9.0) without a GPU: numba-cuda's front end (``compile_cuda``, NVVM's input). Run in a process of
its own without the CUDA simulator (``tests/gpu_engine/test_kernels_type.py`` does), as
``python -m tests.gpu_engine.kernel_typing``; prints one line a variant and exits non-zero on the
first that fails.

Arguments are typed from the kernels' parameter names: the scalars each launch passes as
``np.int64``/``np.int32``, the weight tiers 2-D, every other parameter a C-contiguous 1-D
array of the variant's money type or int64. Only the front end runs (PTX needs NVRTC, which
CI lacks)."""

from __future__ import annotations

import inspect
import sys

import numba
import numba.cuda.dispatcher as dispatcher
from numba import types
from numba.cuda.compiler import compile_cuda

H100 = (9, 0)


class _H100:
    compute_capability = H100


# Device functions ask the current device for its compute capability as they compile.
dispatcher.get_current_device = lambda: _H100()  # type: ignore[assignment]


def lower(kernel, scalars: dict[str, types.Type], element=types.int64) -> None:
    names = inspect.signature(kernel.py_func).parameters
    sig = tuple(scalars.get(name, types.Array(element, 1, "C")) for name in names)
    compile_cuda(kernel.py_func, types.void, sig, cc=H100)


def _ints(kind, *names: str) -> dict[str, types.Type]:
    return dict.fromkeys(names, kind)


def variants():
    """(name, kernel, scalar types, array element type) of every variant checked."""
    from gpu_engine.batch import cuda as batch_cuda
    from gpu_engine.batch import v2_cuda
    from gpu_engine.solvers.full import cuda as full_cuda
    from gpu_engine.solvers.full.cuda_parcels import build_parcel_kernel

    solve = _ints(types.int64, "lo", "scratch_lo", "heavy_min")
    for mode in ("RANGE", "LIGHT", "INDEXED"):
        for small in (numba.int32, numba.int64):
            kernel = batch_cuda._build(64, getattr(batch_cuda, mode), small, numba.int64, small)
            yield f"batch solve {mode} {small}", kernel, solve, types.int64
    plan = _ints(types.int64, "lo", "hi", "max_work", "prefer", "prune")
    yield "batch plan", batch_cuda._build_plan(), plan, types.int64
    tiers = {name: types.Array(types.int64, 2, "C") for name in ("tier_up", "tier_fee")}
    yield "batch v2 search", v2_cuda._build(), tiers, types.int64
    rows = _ints(types.int64, "row_lo", "row_hi", "rows_per_chunk")
    for int32 in (False, True):
        for pair in (False, True):
            kernel = full_cuda._build_kernel(8, int32, True, pair, None)
            scalars = {**rows, **_ints(types.int32, "n_lines", "n_merchants")}
            money = types.int32 if int32 else types.int64
            yield f"full int32={int32} pair={pair}", kernel, scalars, money
    for pair in (False, True):
        kernel = build_parcel_kernel(8, False, True, pair, None, full_cuda.LIMITS)
        scalars = {**rows, **tiers, **_ints(types.int32, "n_lines", "n_columns", "n_owners")}
        yield f"parcels pair={pair}", kernel, scalars, types.int64


def main() -> int:
    for name, kernel, scalars, element in variants():
        try:
            lower(kernel, scalars, element)
        except Exception as error:  # the first failure is the report
            print(f"FAILED {name}: {type(error).__name__}: {error}", flush=True)
            return 1
        print(f"ok {name}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
