"""Key statistics and the cost model that chooses a radix tree's bit strides.

Terms (keys are 64-bit, compared from the most significant bit; "depth" counts leading bits):

- ``lcp[i]``: length of the common prefix of sorted keys ``i - 1`` and ``i`` (-1 for ``i == 0``).
  The keys sharing their first ``d`` bits form a contiguous *group at depth d*; a group starts at
  every ``i`` with ``lcp[i] < d``.
- ``leaf_depth[i]``: the smallest depth at which key ``i``'s group holds at most ``leaf_size``
  keys. Deeper groups only shrink, so a tree level ending at depth ``e >= leaf_depth[i]`` can
  stop there with a *leaf*: a pointer to at most ``leaf_size`` contiguous sorted keys, scanned
  by the lookup. It is ``1 + max`` over the windows of ``leaf_size + 1`` consecutive keys
  containing ``i`` of the window's smallest ``lcp`` (0 when there are at most ``leaf_size``
  keys), capped at 64.

Both are O(n * leaf_size) to compute and fully summarised by the 66 x 65 histogram
``H[lcp + 1, leaf_depth]``, from which, for every depth ``d``:

- ``active(d)``: keys whose lookups read a level starting at depth ``d`` (``leaf_depth > d``);
- ``nodes(d)``: tree nodes at depth ``d`` = groups at depth ``d`` with more than ``leaf_size``
  keys = ``#{i : lcp[i] < d < leaf_depth[i]}``;
- per level ``[d, e)``: keys whose lookup ends there in a leaf and how many leaves they share.

Cost model. A lookup of key ``i`` reads one child-table entry per level it visits (each a
dependent random access, the dominant cost), then scans its leaf. For a stride sequence
(depths ``0 = b_0 < b_1 < ... < b_L``)::

    accesses = sum_l active(b_l) + sum_l leaf_keys(b_l, b_l+1) * (1 + SCAN_COST * mean_leaf)
    bytes    = sum_l nodes(b_l) * 2**(b_l+1 - b_l) * entry_bytes        (nodes(0) = 1)

The plan minimises ``accesses`` subject to ``bytes <= memory_budget`` by dynamic programming over
depths on the Lagrangian ``accesses + lam * bytes``, bisecting ``lam``. Every key must end in a
leaf: the last level ends at a depth no key is active at. Lookups of keys missing from the tree
stop at the first empty entry, at most as deep as hits, so hits set the cost.
"""

import math

import numba
import numpy as np

MAX_STRIDE = 24
DEFAULT_LEAF_SIZE = 8
MAX_LEAF_SIZE = 16
# One extra sorted key compared in a leaf costs about this fraction of a random table read: the
# whole leaf (<= 128 bytes) arrives with the first sector or two.
SCAN_COST = 0.125
_DEPTHS = 65


@numba.njit(cache=True)
def clz64(x):
    """Leading zero bits of a uint64 (64 for 0)."""
    if x == 0:
        return 64
    n = 0
    bit = np.uint64(1) << np.uint64(63)
    while (x & bit) == 0:
        n += 1
        bit >>= np.uint64(1)
    return n


@numba.njit(cache=True)
def key_lcp_cpu(keys, lcp):
    """``lcp[i]`` of sorted ``keys`` (see the module docstring)."""
    for i in range(keys.size):
        lcp[i] = -1 if i == 0 else clz64(keys[i] ^ keys[i - 1])


@numba.njit(cache=True)
def key_leaf_depth_cpu(lcp, leaf_size, leaf_depth):
    """``leaf_depth[i]`` from ``lcp`` (see the module docstring)."""
    n = lcp.size
    for i in range(n):
        deepest = -1
        for j in range(max(0, i - leaf_size), i + 1):
            if j + leaf_size >= n:
                break
            shared = 64
            for k in range(j + 1, j + leaf_size + 1):
                shared = min(shared, lcp[k])
            deepest = max(deepest, shared)
        leaf_depth[i] = min(deepest + 1, 64)


@numba.njit(cache=True)
def key_histogram_cpu(lcp, leaf_depth, histogram):
    """Accumulate ``histogram[lcp + 1, leaf_depth]``."""
    for i in range(lcp.size):
        histogram[lcp[i] + 1, leaf_depth[i]] += 1


class KeyStats:
    """Per-depth counts derived from the (lcp, leaf_depth) histogram.

    ``root_depth`` is where the tree starts: the bits above it are common to every key (the
    lookup checks them once against the first key instead of spending levels on them).
    """

    def __init__(self, histogram: np.ndarray, root_depth: int = 0):
        h = np.asarray(histogram, dtype=np.int64)  # [lcp + 1 in 0..65, leaf_depth in 0..64]
        self.root_depth = root_depth
        self.n_keys = int(h.sum())
        depths = np.arange(_DEPTHS)
        by_depth = h.sum(axis=0)
        # active[d] = #{leaf_depth > d}
        self.active = np.array([by_depth[d + 1 :].sum() for d in depths], dtype=np.int64)
        self.active[root_depth] = self.n_keys
        # nodes[d] = #{lcp < d < leaf_depth}; rows are lcp + 1, so lcp < d is row <= d.
        cumulative_rows = np.cumsum(h, axis=0)
        self.nodes = np.array([cumulative_rows[d, d + 1 :].sum() for d in depths], dtype=np.int64)
        self.nodes[root_depth] = 1  # the root exists even for an empty key set
        self._h = h
        self._cumulative_rows = cumulative_rows

    def leaf_keys_and_groups(self, start: int, end: int) -> tuple[int, int]:
        """Keys whose lookup ends in a leaf of level [start, end), and the number of leaves."""
        # The root level also holds the keys of a set small enough to be one leaf.
        low = 0 if start == self.root_depth else start + 1
        columns = slice(low, end + 1)
        keys = int(self._h[:, columns].sum())
        groups = int(self._cumulative_rows[end, columns].sum())  # group starts: lcp < end
        return keys, groups

    def required_depth(self) -> int:
        """Smallest depth at which every key is in a leaf."""
        need = np.nonzero(self.active)[0]
        return max(self.root_depth, int(need[-1] + 1) if need.size else 0)


def plan_cost(stats: KeyStats, strides, *, entry_bytes: int) -> tuple[float, int]:
    """(expected accesses per key, table bytes) of a stride sequence."""
    accesses = 0.0
    total_bytes = 0
    depth = stats.root_depth
    for stride in strides:
        accesses += _level_accesses(stats, depth, depth + stride)
        total_bytes += int(stats.nodes[depth]) << stride
        depth += stride
    return accesses / max(stats.n_keys, 1), total_bytes * entry_bytes


def plan_strides(
    stats: KeyStats, *, memory_budget: int, entry_bytes: int, max_stride: int = MAX_STRIDE
) -> tuple[int, ...]:
    """Stride sequence of least expected accesses whose tables fit in ``memory_budget`` bytes.

    If no sequence fits, the smallest one is returned (the budget is a target, not a limit).
    """
    if stats.n_keys == 0:
        return (1,)
    best = None
    low, high = 0.0, 1.0
    # Grow the price of memory until the plan fits, then bisect between fitting and not.
    for _ in range(200):
        strides = _plan_for_price(stats, high, entry_bytes, max_stride)
        if plan_cost(stats, strides, entry_bytes=entry_bytes)[1] <= memory_budget:
            best = strides
            break
        low, high = high, high * 16
    if best is None:
        return strides
    for _ in range(40):
        middle = math.sqrt(low * high) if low > 0 else high / 16
        strides = _plan_for_price(stats, middle, entry_bytes, max_stride)
        if plan_cost(stats, strides, entry_bytes=entry_bytes)[1] <= memory_budget:
            best, high = strides, middle
        else:
            low = middle
        if high - low <= high * 1e-3:
            break
    return best


def _level_accesses(stats: KeyStats, start: int, end: int) -> float:
    keys, groups = stats.leaf_keys_and_groups(start, end)
    mean_leaf = keys / groups if groups else 0.0
    return float(stats.active[start]) + keys * (1.0 + SCAN_COST * mean_leaf)


def _plan_for_price(stats, price, entry_bytes, max_stride):
    """Dynamic program over depths: least ``accesses + price * bytes`` from each depth on."""
    n = max(stats.n_keys, 1)
    cost = np.full(_DEPTHS, np.inf)
    choice = np.zeros(_DEPTHS, np.int64)
    root = stats.root_depth
    cost[64] = 0.0
    for depth in range(63, root - 1, -1):
        if depth > root and stats.active[depth] == 0:
            cost[depth] = 0.0
            continue
        for stride in range(1, min(max_stride, 64 - depth) + 1):
            end = depth + stride
            level_bytes = float(stats.nodes[depth]) * (2.0**stride) * entry_bytes
            total = _level_accesses(stats, depth, end) / n + price * level_bytes
            total += 0.0 if stats.active[end] == 0 else cost[end]
            if total < cost[depth]:
                cost[depth] = total
                choice[depth] = stride
    strides = []
    depth = root
    while True:
        stride = int(choice[depth])
        strides.append(stride)
        depth += stride
        if depth >= 64 or stats.active[depth] == 0:
            return tuple(strides)
