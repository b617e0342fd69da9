"""CUDA kernels of the radix tree: key statistics, level build, prefix expansion, lookups.

Thread-to-data mapping: every build kernel runs one thread per sorted key (``i = grid(1)``),
every lookup kernel one thread per query. Build kernels mirror the CPU twin in
:mod:`gpu_engine.catalog.radix.cpu` line for line and call its ``@njit`` helpers for the bit work,
so the two produce identical tables. Lookups read one child-table entry per level (a dependent
random access, usually an L2 hit: the tables are planned to stay small), then scan at most
``leaf_size`` contiguous sorted keys.

The host wrappers at the bottom take device arrays, choose the grid and launch; the tree
logic lives in :mod:`gpu_engine.catalog.radix.tree`. Nothing here touches CUDA at import.
"""

import numba
import numpy as np
from numba import cuda

from gpu_engine.catalog.radix import cpu as radix_cpu
from gpu_engine.catalog.radix.cpu import is_active, slot_index
from gpu_engine.catalog.radix.plan import clz64

# The CPU twin's array-walking functions, compiled as device functions from the same source (its
# scalar helpers are @njit and callable from kernels as they are).
_child_code = cuda.jit(device=True)(radix_cpu.child_code_py)
_exact_find = cuda.jit(device=True)(radix_cpu.exact_find_py)
_prefix_find = cuda.jit(device=True)(radix_cpu.prefix_find_py)

_THREADS = 256
_SIM_THREADS = 32
_HIST_ROWS = 66
_HIST_COLS = 65
_HIST_BINS = _HIST_ROWS * _HIST_COLS


@cuda.jit
def _lcp_kernel(keys, lcp):
    i = cuda.grid(1)
    if i < keys.size:
        lcp[i] = -1 if i == 0 else clz64(keys[i] ^ keys[i - 1])


@cuda.jit
def _leaf_depth_kernel(lcp, leaf_size, leaf_depth):
    i = cuda.grid(1)
    n = lcp.size
    if i >= n:
        return
    deepest = -1
    for j in range(max(0, i - leaf_size), i + 1):
        if j + leaf_size >= n:
            break
        shared = 64
        for k in range(j + 1, j + leaf_size + 1):
            shared = min(shared, lcp[k])
        deepest = max(deepest, shared)
    leaf_depth[i] = min(deepest + 1, 64)


@cuda.jit
def _histogram_kernel(lcp, leaf_depth, histogram):
    # Nearly all keys share a handful of bins: count per block in shared memory first, so the
    # global atomics are one per non-empty bin and block instead of one per key.
    counts = cuda.shared.array(_HIST_BINS, numba.int32)
    t = cuda.threadIdx.x
    for b in range(t, _HIST_BINS, cuda.blockDim.x):
        counts[b] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < lcp.size:
        cuda.atomic.add(counts, (lcp[i] + 1) * _HIST_COLS + leaf_depth[i], 1)
    cuda.syncthreads()
    for b in range(t, _HIST_BINS, cuda.blockDim.x):
        if counts[b] != 0:
            cuda.atomic.add(histogram, (b // _HIST_COLS, b % _HIST_COLS), np.int64(counts[b]))


@cuda.jit
def _node_flags_kernel(lcp, leaf_depth, depth, flags):
    i = cuda.grid(1)
    if i < lcp.size:
        flags[i] = 1 if (lcp[i] < depth and leaf_depth[i] > depth) else 0


@cuda.jit
def _ids_from_scan_kernel(scanned):
    i = cuda.grid(1)
    if i < scanned.size:
        scanned[i] -= 1


@cuda.jit
def _write_level_kernel(
    keys, lcp, leaf_depth, node_ids, next_ids, level, depth, stride, level_offset, leaf_size,
    last, children,
):  # fmt: skip
    i = cuda.grid(1)
    end = depth + stride
    if i >= keys.size or not is_active(level, leaf_depth[i], depth) or lcp[i] >= end:
        return
    slot = slot_index(level_offset, node_ids[i], stride, keys[i], depth)
    children[slot] = _child_code(i, lcp, next_ids, end, leaf_size, last)


@cuda.jit
def _expand_level_kernel(
    keys, lengths, leaf_depth, node_ids, level, depth, stride, level_offset, best
):
    i = cuda.grid(1)
    if i >= keys.size:
        return
    end = depth + stride
    length = np.int64(lengths[i])
    if not is_active(level, leaf_depth[i], depth) or length <= depth or length > end:
        return
    first = slot_index(level_offset, node_ids[i], stride, keys[i], depth)
    claim = (length << np.int64(32)) | np.int64(i + 1)
    # Slots one rule covers are contiguous; rules of the same length never overlap, so the
    # atomic max only arbitrates between lengths (the longest wins).
    for slot in range(first, first + (np.int64(1) << (end - length))):
        cuda.atomic.max(best, slot, claim)


@cuda.jit
def _pack_entries_kernel(children, best, entries):
    slot = cuda.grid(1)
    if slot < children.size:
        entries[slot] = (np.uint64(best[slot] & 0xFFFFFFFF) << np.uint64(32)) | np.uint64(
            children[slot]
        )


@cuda.jit
def _fill_kernel(array, value):
    i = cuda.grid(1)
    if i < array.size:
        array[i] = value


@cuda.jit
def _exact_lookup_kernel(
    queries, keys, values, children, level_depth, level_stride, level_offset, out
):  # fmt: skip
    i = cuda.grid(1)
    if i < queries.size:
        j = _exact_find(queries[i], keys, children, level_depth, level_stride, level_offset)
        out[i] = values[j] if j >= 0 else -1


@cuda.jit
def _prefix_lookup_kernel(
    queries, keys, lengths, values, entries, level_depth, level_stride, level_offset,
    default_rule, out,
):  # fmt: skip
    i = cuda.grid(1)
    if i < queries.size:
        j = _prefix_find(
            queries[i], keys, lengths, entries, level_depth, level_stride, level_offset,
            default_rule,
        )  # fmt: skip
        out[i] = values[j] if j >= 0 else -1


def threads_per_block() -> int:
    return _SIM_THREADS if numba.config.ENABLE_CUDASIM else _THREADS


def _grid(n):
    threads = threads_per_block()
    return max(1, -(-n // threads)), threads


def key_stats_cuda(keys, leaf_size):
    """(lcp, leaf_depth, histogram) of sorted unique device ``keys``; the histogram on the host."""
    n = keys.shape[0]
    lcp = cuda.device_array(n, np.int32)
    leaf_depth = cuda.device_array(n, np.int32)
    histogram = cuda.to_device(np.zeros((_HIST_ROWS, _HIST_COLS), np.int64))
    if n:
        grid = _grid(n)
        _lcp_kernel[grid](keys, lcp)
        _leaf_depth_kernel[grid](lcp, np.int64(leaf_size), leaf_depth)
        _histogram_kernel[grid](lcp, leaf_depth, histogram)
    return lcp, leaf_depth, histogram.copy_to_host()


def node_ids_cuda(lcp, leaf_depth, depth):
    """Node index at ``depth`` of every key (meaningful for keys that have one) and the count."""
    from gpu_engine.catalog.radix.scan import inclusive_scan_cuda

    n = lcp.shape[0]
    ids = cuda.device_array(n, np.int32)
    grid = _grid(n)
    _node_flags_kernel[grid](lcp, leaf_depth, np.int64(depth), ids)
    count = inclusive_scan_cuda(ids, ids, threads=threads_per_block())
    _ids_from_scan_kernel[grid](ids)
    return ids, count


def zeros_cuda(size, dtype):
    if numba.config.ENABLE_CUDASIM:  # one Python thread per element would crawl
        return cuda.to_device(np.zeros(max(size, 1), dtype))
    array = cuda.device_array(max(size, 1), dtype)
    _fill_kernel[_grid(array.shape[0])](array, dtype(0))
    return array


def write_level_cuda(keys, lcp, leaf_depth, node_ids, next_ids, plan, children):
    """Launch one level's child-code writes.

    ``plan`` = (level, depth, stride, offset, leaf_size, last).
    """
    level, depth, stride, offset, leaf_size, last = plan
    _write_level_kernel[_grid(keys.shape[0])](
        keys, lcp, leaf_depth, node_ids, next_ids, np.int64(level), np.int64(depth),
        np.int64(stride), np.int64(offset), np.int64(leaf_size), last, children,
    )  # fmt: skip


def expand_level_cuda(keys, lengths, leaf_depth, node_ids, plan, best):
    level, depth, stride, offset = plan
    _expand_level_kernel[_grid(keys.shape[0])](
        keys, lengths, leaf_depth, node_ids, np.int64(level), np.int64(depth), np.int64(stride),
        np.int64(offset), best,
    )  # fmt: skip


def pack_entries_cuda(children, best):
    entries = cuda.device_array(children.shape[0], np.uint64)
    _pack_entries_kernel[_grid(children.shape[0])](children, best, entries)
    return entries


def exact_lookup_cuda(queries, tree_arrays, out, *, threads=None, stream=0):
    """``tree_arrays`` = (keys, values, children, level_depth, level_stride, level_offset)."""
    n = queries.shape[0]
    if n == 0:
        return
    threads = threads or threads_per_block()
    blocks = -(-n // threads)
    _exact_lookup_kernel[blocks, threads, stream](queries, *tree_arrays, out)


def prefix_lookup_cuda(queries, tree_arrays, default_rule, out, *, threads=None, stream=0):
    """LPM lookups of device ``queries`` into ``out``.

    ``tree_arrays`` = (keys, lengths, values, entries, level_depth, level_stride, level_offset).
    """
    n = queries.shape[0]
    if n == 0:
        return
    threads = threads or threads_per_block()
    blocks = -(-n // threads)
    _prefix_lookup_kernel[blocks, threads, stream](
        queries, *tree_arrays, np.int64(default_rule), out
    )
