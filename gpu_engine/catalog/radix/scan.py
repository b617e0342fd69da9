"""Inclusive prefix sum of an int32 device array (the radix tree build numbers nodes with it).

Three steps, recursively: each block scans its ``threads`` elements in shared memory
(Hillis-Steele, double-buffered: thread ``t`` owns element ``block * threads + t``) and writes
its total; the block totals are scanned the same way; each block adds the total of the blocks
before it. Nothing here touches CUDA at import.
"""

import functools

import numba
import numpy as np
from numba import cuda


@functools.cache
def _kernels(threads):
    buffer_size = 2 * threads  # shared.array needs a compile-time constant, not an expression

    @cuda.jit
    def block_scan(values, out, block_totals):
        buffer = cuda.shared.array(buffer_size, numba.int32)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * threads + t
        buffer[t] = values[i] if i < values.size else 0
        cuda.syncthreads()
        source = 0
        offset = 1
        while offset < threads:
            value = buffer[source * threads + t]
            if t >= offset:
                value += buffer[source * threads + t - offset]
            buffer[(1 - source) * threads + t] = value
            cuda.syncthreads()
            source = 1 - source
            offset *= 2
        total = buffer[source * threads + t]
        if i < values.size:
            out[i] = total
        if t == threads - 1:
            block_totals[cuda.blockIdx.x] = total

    @cuda.jit
    def add_block_prefix(out, scanned_totals):
        block = cuda.blockIdx.x
        i = block * threads + cuda.threadIdx.x
        if block > 0 and i < out.size:
            out[i] += scanned_totals[block - 1]

    return block_scan, add_block_prefix


def inclusive_scan_cuda(values, out, *, threads=256):
    """``out[i] = values[0] + ... + values[i]`` for int32 device arrays; returns the total."""
    n = values.shape[0]
    if n == 0:
        return 0
    block_scan, add_block_prefix = _kernels(threads)
    blocks = -(-n // threads)
    totals = cuda.device_array(blocks, np.int32)
    block_scan[blocks, threads](values, out, totals)
    if blocks > 1:
        inclusive_scan_cuda(totals, totals, threads=threads)
        add_block_prefix[blocks, threads](out, totals)
    return int(out[n - 1 : n].copy_to_host()[0])
