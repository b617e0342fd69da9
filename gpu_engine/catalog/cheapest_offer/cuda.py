"""CUDA kernels for the cheapest offer per product (ties to the lowest merchant id).

Two kernels, each built by a factory for one launch shape and one reduction flavour:

- dense (P, O) rows with O a multiple of 4 and 16-byte aligned rows: **one warp per product**.
  Lane ``l`` reads the 16-byte vectors ``l, l + 32, l + 64, ...`` of the product's merchant and
  price rows (``ld.global.nc.v4``), eight vectors of each array per lane issued before any is
  used, so 8 KiB per warp are in flight. Each lane keeps its best (key, column); the warp then
  reduces.
- CSR rows (ragged): **a group of ``group`` consecutive lanes per product** (1 to 32, chosen by
  the host from the mean row length), lane ``s`` of a group reads offers ``start + s``,
  ``start + s + group``, ... four at a time before folding them.

Both loop over products block-uniformly (every thread of a block runs the same number of
iterations), so the reduction can use ``__syncthreads``. The reduction is a warp-shuffle
tree (``reduction="shuffle"``, real GPUs) or a shared-memory tree (``reduction="shared"``), both
from :mod:`gpu_engine.cuda_ops.reduce` (the engine's one min-with-index reduction), the latter
is what Numba's simulator can run: it has no warp shuffles.

Ranking uses :func:`gpu_engine.catalog.cheapest_offer.cpu.offer_key`, the same njit function as the
CPU twin. Within a lane, offers are visited in increasing index and only a strictly smaller key
replaces the best, so equal keys keep the lowest index; the tree compares (key, index).

Nothing here touches CUDA at import: kernels compile on first launch and are cached per shape.
"""

import functools

import numba
import numpy as np
from numba import cuda

from gpu_engine.catalog.cheapest_offer.cpu import offer_key, offer_key_merchant, offer_key_price
from gpu_engine.cuda_ops.reduce import group_min_shuffle, make_group_min_shared

WARP_SIZE = 32
# Vectors of 4 offers each lane has in flight per array in the dense kernel's main loop.
_DENSE_UNROLL = 8
_DENSE_CHUNK = WARP_SIZE * _DENSE_UNROLL


# PTX for each flavour of the 16-byte load: the read-only path (.nc), the default, and the
# streaming hint (.cs, evict first). The benchmark compares them.
_LOAD4_PTX = {
    "nc": "ld.global.nc.v4.s32",
    "plain": "ld.global.v4.s32",
    "cs": "ld.global.cs.v4.s32",
}


@functools.cache
def _build_load4(flavour):
    """Device function ``load4(ary, i) -> (ary[i], ..., ary[i + 3])`` for 16-byte aligned ``i``.

    On a GPU it is one 16-byte load (Numba would emit four 4-byte loads, as it cannot prove the
    alignment). The simulator runs plain Python, so there it is four indexings.
    """
    instruction = _LOAD4_PTX[flavour]
    if numba.config.ENABLE_CUDASIM:

        @cuda.jit(device=True)
        def load4_indexed(ary, i):
            return ary[i], ary[i + 1], ary[i + 2], ary[i + 3]

        return load4_indexed

    from llvmlite import ir
    from numba.core import types

    try:
        from numba.cuda.extending import intrinsic
    except ImportError:  # older numba-cuda releases use numba's own extension API
        from numba.core.extending import intrinsic

    @intrinsic
    def load4(typingctx, ary, index):
        if not isinstance(ary, types.Array) or ary.dtype != types.int32 or ary.ndim != 1:
            return None
        if not isinstance(index, types.Integer):
            return None
        signature = types.UniTuple(types.int32, 4)(ary, index)

        def codegen(context, builder, sig, args):
            ary_type, index_type = sig.args
            ary_value, index_value = args
            data = context.make_array(ary_type)(context, builder, ary_value).data
            offset = context.cast(builder, index_value, index_type, types.intp)
            pointer = builder.gep(data, [offset])
            i32 = ir.IntType(32)
            fn_type = ir.FunctionType(ir.LiteralStructType([i32] * 4), [pointer.type])
            asm = ir.InlineAsm(fn_type, instruction + " {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,l")
            loaded = builder.call(asm, [pointer])
            values = [builder.extract_value(loaded, k) for k in range(4)]
            return context.make_tuple(builder, sig.return_type, values)

        return signature, codegen

    return load4


@cuda.jit(device=True)
def _fold(merchant, price, index, key, best):
    candidate = offer_key(price, merchant)
    # Branch-free (bitwise | and selects): branches here would let ptxas sink the loads that the
    # callers issue ahead, leaving only two in flight.
    take = (candidate < key) | (best < 0)
    return (candidate if take else key), (index if take else best)


@cuda.jit(device=True)
def _fold4(merchants, prices, column, key, best):
    key, best = _fold(merchants[0], prices[0], column, key, best)
    key, best = _fold(merchants[1], prices[1], column + 1, key, best)
    key, best = _fold(merchants[2], prices[2], column + 2, key, best)
    return _fold(merchants[3], prices[3], column + 3, key, best)


@functools.cache
def _make_scan_dense_row(flavour):
    _load4 = _build_load4(flavour)

    @cuda.jit(device=True)
    def scan_dense_row(merchant, price, row_vector, n_vectors, lane):
        """Best (key, column) of the lane's share of one row; ``row_vector`` is its first vector."""
        key = np.int64(0)
        best = np.int64(-1)
        full = n_vectors - n_vectors % _DENSE_CHUNK
        v = np.int64(lane)
        while v < full:
            e = (row_vector + v) * 4
            m0 = _load4(merchant, e)
            m1 = _load4(merchant, e + 128)
            m2 = _load4(merchant, e + 256)
            m3 = _load4(merchant, e + 384)
            m4 = _load4(merchant, e + 512)
            m5 = _load4(merchant, e + 640)
            m6 = _load4(merchant, e + 768)
            m7 = _load4(merchant, e + 896)
            p0 = _load4(price, e)
            p1 = _load4(price, e + 128)
            p2 = _load4(price, e + 256)
            p3 = _load4(price, e + 384)
            p4 = _load4(price, e + 512)
            p5 = _load4(price, e + 640)
            p6 = _load4(price, e + 768)
            p7 = _load4(price, e + 896)
            c = v * 4
            key, best = _fold4(m0, p0, c, key, best)
            key, best = _fold4(m1, p1, c + 128, key, best)
            key, best = _fold4(m2, p2, c + 256, key, best)
            key, best = _fold4(m3, p3, c + 384, key, best)
            key, best = _fold4(m4, p4, c + 512, key, best)
            key, best = _fold4(m5, p5, c + 640, key, best)
            key, best = _fold4(m6, p6, c + 768, key, best)
            key, best = _fold4(m7, p7, c + 896, key, best)
            v += _DENSE_CHUNK
        while v < n_vectors:
            e = (row_vector + v) * 4
            key, best = _fold4(_load4(merchant, e), _load4(price, e), v * 4, key, best)
            v += WARP_SIZE
        return key, best

    return scan_dense_row


@cuda.jit(device=True)
def _scan_csr_row(merchant, price, start, end, sub, group, first_column):
    """Best (key, index) of the group lane's share of offers [start, end), four loads ahead."""
    key = np.int64(0)
    best = np.int64(-1)
    i = start + sub
    while i + 3 * group < end:
        m0 = merchant[i]
        m1 = merchant[i + group]
        m2 = merchant[i + 2 * group]
        m3 = merchant[i + 3 * group]
        p0 = price[i]
        p1 = price[i + group]
        p2 = price[i + 2 * group]
        p3 = price[i + 3 * group]
        c = i - first_column
        key, best = _fold(m0, p0, c, key, best)
        key, best = _fold(m1, p1, c + group, key, best)
        key, best = _fold(m2, p2, c + 2 * group, key, best)
        key, best = _fold(m3, p3, c + 3 * group, key, best)
        i += 4 * group
    while i < end:
        key, best = _fold(merchant[i], price[i], i - first_column, key, best)
        i += group
    return key, best


@cuda.jit(device=True)
def _scan_csr_row8(merchant, price, start, end, sub, group, first_column):
    """As ``_scan_csr_row`` with eight loads of each array ahead (long rows)."""
    key = np.int64(0)
    best = np.int64(-1)
    i = start + sub
    while i + 7 * group < end:
        m0 = merchant[i]
        m1 = merchant[i + group]
        m2 = merchant[i + 2 * group]
        m3 = merchant[i + 3 * group]
        m4 = merchant[i + 4 * group]
        m5 = merchant[i + 5 * group]
        m6 = merchant[i + 6 * group]
        m7 = merchant[i + 7 * group]
        p0 = price[i]
        p1 = price[i + group]
        p2 = price[i + 2 * group]
        p3 = price[i + 3 * group]
        p4 = price[i + 4 * group]
        p5 = price[i + 5 * group]
        p6 = price[i + 6 * group]
        p7 = price[i + 7 * group]
        c = i - first_column
        key, best = _fold(m0, p0, c, key, best)
        key, best = _fold(m1, p1, c + group, key, best)
        key, best = _fold(m2, p2, c + 2 * group, key, best)
        key, best = _fold(m3, p3, c + 3 * group, key, best)
        key, best = _fold(m4, p4, c + 4 * group, key, best)
        key, best = _fold(m5, p5, c + 5 * group, key, best)
        key, best = _fold(m6, p6, c + 6 * group, key, best)
        key, best = _fold(m7, p7, c + 7 * group, key, best)
        i += 8 * group
    while i < end:
        key, best = _fold(merchant[i], price[i], i - first_column, key, best)
        i += group
    return key, best


def _group_min(reduction, threads_per_block):
    if reduction == "shuffle":
        return group_min_shuffle
    if reduction == "shared":
        return make_group_min_shared(threads_per_block)
    raise ValueError(f"reduction must be 'shuffle' or 'shared', got {reduction!r}")


@cuda.jit(device=True)
def _store(product, key, best, best_merchant, best_price, best_index):
    if best < 0:
        best_merchant[product] = -1
        best_price[product] = -1
        best_index[product] = -1
    else:
        best_merchant[product] = offer_key_merchant(key)
        best_price[product] = offer_key_price(key)
        best_index[product] = best


@functools.cache
def dense_kernel(reduction, threads_per_block, flavour="nc"):
    """Kernel ``(merchant, price, n_products, n_vectors, out_m, out_p, out_i)`` over flat rows.

    ``flavour`` picks the 16-byte load's cache operator (see ``_LOAD4_PTX``).
    """
    group_min = _group_min(reduction, threads_per_block)
    _scan_dense_row = _make_scan_dense_row(flavour)
    warps_per_block = threads_per_block // WARP_SIZE

    @cuda.jit
    def cheapest_offer_dense(
        merchant, price, n_products, n_vectors, best_merchant, best_price, best_index
    ):
        t = cuda.threadIdx.x
        lane = t % WARP_SIZE
        warp = t // WARP_SIZE
        stride = cuda.gridDim.x * warps_per_block
        for first in range(cuda.blockIdx.x * warps_per_block, n_products, stride):
            product = first + warp
            key = np.int64(0)
            best = np.int64(-1)
            if product < n_products:
                key, best = _scan_dense_row(merchant, price, product * n_vectors, n_vectors, lane)
            key, best = group_min(key, best, WARP_SIZE)
            if lane == 0 and product < n_products:
                _store(product, key, best, best_merchant, best_price, best_index)

    return cheapest_offer_dense


@functools.cache
def csr_kernel(reduction, threads_per_block, group, column_index, unroll=4):
    """Kernel ``(offsets, width, merchant, price, n_products, out_m, out_p, out_i)``.

    Rows come from ``offsets`` or, when ``width`` > 0, are the dense rows
    ``[p * width, (p + 1) * width)`` (``offsets`` unread). ``column_index`` reports the offer's
    position within its row instead of the flat index. ``unroll``: loads of each array a lane
    has in flight, 4 or 8.
    """
    group_min = _group_min(reduction, threads_per_block)
    per_block = threads_per_block // group
    scan_row = _scan_csr_row8 if unroll == 8 else _scan_csr_row

    @cuda.jit
    def cheapest_offer_csr(
        offsets, width, merchant, price, n_products, best_merchant, best_price, best_index
    ):
        t = cuda.threadIdx.x
        sub = t % group
        slot = t // group
        stride = cuda.gridDim.x * per_block
        for first in range(cuda.blockIdx.x * per_block, n_products, stride):
            product = first + slot
            key = np.int64(0)
            best = np.int64(-1)
            if product < n_products:
                if width > 0:
                    start = product * width
                    end = start + width
                else:
                    start = np.int64(offsets[product])
                    end = np.int64(offsets[product + 1])
                first_column = start if column_index else np.int64(0)
                key, best = scan_row(merchant, price, start, end, sub, group, first_column)
            key, best = group_min(key, best, group)
            if sub == 0 and product < n_products:
                _store(product, key, best, best_merchant, best_price, best_index)

    return cheapest_offer_csr


def csr_group_for(n_products, n_offers):
    """Lanes per product for the CSR kernel: about 8 offers per lane, a power of two in 1..32."""
    mean = n_offers / max(n_products, 1)
    group = 1
    while group < WARP_SIZE and group * 8 < mean:
        group *= 2
    return group


def launch_dense(
    merchant, price, out, *, reduction, threads_per_block, flavour="nc", blocks=None, stream=0
):
    """Launch the dense vector kernel on device arrays: flat (P * O,) int32 merchant/price.

    ``out`` is ``(best_merchant, best_price, best_index)`` of length P. The caller guarantees O is
    a multiple of 4 and the arrays are 16-byte aligned.
    """
    n_products = out[0].shape[0]
    n_vectors = merchant.shape[0] // 4 // max(n_products, 1)
    if blocks is None:
        blocks = max(1, -(-n_products // (threads_per_block // WARP_SIZE)))
    kernel = dense_kernel(reduction, threads_per_block, flavour)
    kernel[blocks, threads_per_block, stream](
        merchant, price, np.int64(n_products), np.int64(n_vectors), *out
    )


def launch_csr(
    offsets,
    merchant,
    price,
    out,
    *,
    reduction,
    threads_per_block,
    group,
    column_index=False,
    width=0,
    unroll=4,
    blocks=None,
    stream=0,
):
    """Launch the row-scan kernel on device arrays.

    Rows are CSR (``offsets`` int64, P + 1 entries) or, with ``width`` > 0, dense rows of that
    many offers (``offsets`` may then be any int64 device array; it is not read).
    """
    n_products = out[0].shape[0]
    if blocks is None:
        blocks = max(1, -(-n_products // (threads_per_block // group)))
    kernel = csr_kernel(reduction, threads_per_block, group, column_index, unroll)
    kernel[blocks, threads_per_block, stream](
        offsets, np.int64(width), merchant, price, np.int64(n_products), *out
    )
