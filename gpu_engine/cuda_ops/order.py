"""The one order of every best-of search in the engine, CPU loops and GPU reductions alike.

Candidates are (value, index) pairs: the lower value wins, then the lower index. The order is
total on distinct indexes, so a reduction tree of any shape picks the same winner as a scan in
index order (the CPU twins' loops): that is what makes kernel/twin parity exact. An index < 0
marks an empty slot (a thread that saw no candidate), which loses to every real candidate.

Plain ``numba.njit`` functions: CPU code calls them directly, device functions and kernels call
the same objects (numba compiles them for CUDA on use), so the order is written once.
"""

from __future__ import annotations

import numba


@numba.njit(cache=True)
def lower_first(value_a, index_a, value_b, index_b):
    """(value_a, index_a) comes strictly before (value_b, index_b)."""
    return value_a < value_b or (value_a == value_b and index_a < index_b)


@numba.njit(cache=True)
def takes(value, index, other_value, other_index):
    """The candidate (other_value, other_index) replaces the current best (value, index): it
    is real, and the current one is empty or comes after it."""
    if other_index < 0:
        return False
    if index < 0:
        return True
    return lower_first(other_value, other_index, value, index)
