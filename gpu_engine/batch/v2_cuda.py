"""The version 2 batch's CUDA kernel and its host side; CPU twin: :mod:`gpu_engine.batch.v2_cpu`.

One block per cart planned FULL: thread ``t`` of ``T`` walks the ``t``-th contiguous share of
its assignments (:func:`gpu_engine.batch.v2_ops.search_v2`, state in local arrays bounded by
:data:`~gpu_engine.batch.v2_pack.MAX_V2_COLUMNS` and ``MAX_V2_OWNERS``), the engine's block
reduction (:func:`gpu_engine.cuda_ops.reduce.group_min_in`, lowest index on ties, as the twin's
scan) leaves the block's best, which thread 0 decodes. Version 2 carts reach the batch through the
price watch's per-cart fallback, a few at a time, so the whole batch is copied once and
launched once (no staging or overlap as for the simple carts' millions).
Imported on use only: nothing here runs when the package is imported without a GPU path.
"""

from __future__ import annotations

import threading

import numpy as np
from numba import cuda, int64

from gpu_engine.batch import v2_ops
from gpu_engine.batch.cuda import SIMULATOR_THREADS, THREADS
from gpu_engine.batch.ops import FULL, MAX_FULL_LINES
from gpu_engine.batch.v2_pack import MAX_V2_COLUMNS, MAX_V2_OWNERS, PackedV2
from gpu_engine.cuda_ops.reduce import group_min_in
from gpu_engine.cuda_ops.variants import cached_kernel, source_tag, variant_name
from gpu_engine.device import simulator_enabled
from gpu_engine.pricing import merchant_cost, owner_cost, parcel_fee, weight_fee
from gpu_engine.solvers.full import ops as full_ops
from gpu_engine.solvers.full import parcel_ops
from gpu_engine.solvers.ga.ops_v2 import twins

# The walk and the pricing it calls compiled from their Python by cuda.jit, as the GA's v2
# kernels do: a CPU dispatcher cannot take the simulator's array wrappers (nor, on some
# numba-cuda versions, the device's).
_device = twins(
    (
        merchant_cost.py_func,
        owner_cost.py_func,
        weight_fee.py_func,
        parcel_fee.py_func,
        parcel_ops.column_fee.py_func,
        parcel_ops.shift_line.py_func,
        parcel_ops.row_state.py_func,
        parcel_ops.row_single.py_func,
        parcel_ops.next_row.py_func,
        full_ops.decode_row,
        v2_ops.search_v2,
        v2_ops.decode_v2,
    ),
    cuda.jit(device=True),
)
_search = _device["search_v2"]
_decode = _device["decode_v2"]

_kernel: list = []
_lock = threading.Lock()


def _kernel_template(
    order, complexity, line_ptr, line_qty, line_grams, line_radix, offer_ptr, offer_col,
    offer_amount, col_ptr, col_owner, base, extra, tier_up, tier_fee, tier_count, per_kg,
    owner_ptr, free_over, dmin, dbp, out_total, out_choice,
):  # fmt: skip
    c = order[cuda.blockIdx.x]
    t = cuda.threadIdx.x
    n_threads = cuda.blockDim.x
    l0, l1 = line_ptr[c], line_ptr[c + 1]
    k0, k1 = col_ptr[c], col_ptr[c + 1]
    q0, q1 = owner_ptr[c], owner_ptr[c + 1]
    s_total = cuda.shared.array(THREADS, int64)
    s_index = cuda.shared.array(THREADS, int64)
    digits = cuda.local.array(MAX_FULL_LINES, int64)
    zero = cuda.local.array(MAX_V2_COLUMNS, int64)
    units = cuda.local.array(MAX_V2_COLUMNS, int64)
    grams = cuda.local.array(MAX_V2_COLUMNS, int64)
    fee = cuda.local.array(MAX_V2_COLUMNS, int64)
    osub = cuda.local.array(MAX_V2_OWNERS, int64)
    ounits = cuda.local.array(MAX_V2_OWNERS, int64)
    oparcels = cuda.local.array(MAX_V2_OWNERS, int64)
    ocost = cuda.local.array(MAX_V2_OWNERS, int64)
    for k in range(MAX_V2_COLUMNS):
        zero[k] = 0
    # A contiguous share each: the walk steps row by row.
    size = complexity[c]
    chunk = (size + n_threads - 1) // n_threads
    start = min(t * chunk, size)
    stop = min(start + chunk, size)
    best, index = _search(
        start, stop, l1 - l0, line_radix[l0:l1], offer_ptr[l0:l1], offer_col, offer_amount,
        line_qty[l0:l1], line_grams[l0:l1], k1 - k0, q1 - q0, col_owner[k0:k1], zero,
        digits, units, grams, fee, osub, ounits, oparcels, ocost, base[k0:k1],
        extra[k0:k1], tier_up[k0:k1], tier_fee[k0:k1], tier_count[k0:k1], per_kg[k0:k1],
        free_over[q0:q1], dmin[q0:q1], dbp[q0:q1],
    )  # fmt: skip
    best, index = group_min_in(best, index, n_threads, s_total, s_index)
    if t == 0:
        out_total[c] = best
        _decode(index, l0, l1 - l0, offer_ptr, offer_col, out_choice)


# The modules the kernel's code comes from: a change to any of them names a new variant.
_SOURCES = (
    "gpu_engine.batch.v2_cuda",
    "gpu_engine.batch.v2_ops",
    "gpu_engine.solvers.full.parcel_ops",
    "gpu_engine.solvers.full.ops",
    "gpu_engine.solvers.ga.ops_v2",
    "gpu_engine.pricing",
    "gpu_engine.cuda_ops.reduce",
)


def _build():
    """The kernel, kept on disk by numba under a name that changes with its sources
    (:mod:`gpu_engine.cuda_ops.variants`)."""
    return cached_kernel(
        _kernel_template,
        name=variant_name("batch_v2_search", [source_tag(*_SOURCES)]),
        replaced={},
        jit=cuda.jit,
    )


def get_kernel():
    if not _kernel:
        with _lock:
            if not _kernel:
                _kernel.append(_build())
    return _kernel[0]


def solve_v2_gpu(
    packed: PackedV2, method: np.ndarray, complexity: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(total per cart, cart-local column per line) of the carts planned FULL; -1 for the
    others, as the CPU twin's caller leaves them."""
    total = np.full(packed.n_carts, -1, dtype=np.int64)
    choice = np.full(packed.line_qty.size, -1, dtype=np.int64)
    order = np.flatnonzero(method == FULL).astype(np.int64)
    if order.size == 0:
        return total, choice
    kernel = get_kernel()
    args = [cuda.to_device(a) for a in (order, complexity, *packed.arrays)]
    d_total = cuda.to_device(total)
    d_choice = cuda.to_device(choice)
    # 64 threads a block launch whatever registers the search takes (255 at most a thread).
    threads = SIMULATOR_THREADS if simulator_enabled() else THREADS
    kernel[int(order.size), threads](*args, d_total, d_choice)
    return d_total.copy_to_host(), d_choice.copy_to_host()
