"""CPU (numba) twin of the radix tree build and lookups, and the helpers both sides share.

Layout (see :mod:`gpu_engine.catalog.radix.tree` for the whole picture). Level ``l`` covers key bits
``[depth_l, depth_l + stride_l)`` (from the most significant bit); each of its nodes owns
``2**stride_l`` consecutive 32-bit *child codes* in one flat table, starting at
``level_offset[l] + node * 2**stride_l``:

- ``0``: empty, nothing below;
- ``1 .. 2**31 - 1``: internal, the child is node ``code - 1`` of level ``l + 1``;
- ``LEAF | start << 4 | (size - 1)``: a leaf, sorted keys ``[start, start + size)``, size <= 16.

A prefix (LPM) tree adds, per slot, the *best code*: 0, or 1 + the index of the longest rule
that ends within this level and covers the slot (controlled prefix expansion). Its table packs
both as ``best << 32 | child`` in one uint64, so a level costs one load.

The ``@njit`` helpers here (:func:`key_chunk`, :func:`prefix_matches`, ...) are called by the
CUDA kernels too, so both sides decode the same bits the same way.
"""

import numba
import numpy as np

LEAF = np.int64(1 << 31)
MAX_LEAF_KEYS = 1 << 27  # a leaf's start has 27 bits
_LOW32 = np.uint64(0xFFFFFFFF)
_U32 = np.uint64(32)


@numba.njit(cache=True)
def key_chunk(key, depth, stride):
    """Bits ``[depth, depth + stride)`` of a uint64 key, counted from the top, as int64."""
    return np.int64((key << np.uint64(depth)) >> np.uint64(64 - stride))


@numba.njit(cache=True)
def prefix_matches(query, key, length):
    """True when the first ``length`` bits of ``query`` and ``key`` agree (0 <= length <= 64)."""
    if length == 0:
        return True
    return ((query ^ key) >> np.uint64(64 - length)) == np.uint64(0)


@numba.njit(cache=True)
def leaf_code(start, size):
    return LEAF | (np.int64(start) << np.int64(4)) | np.int64(size - 1)


@numba.njit(cache=True)
def slot_index(level_offset, node, stride, key, depth):
    return level_offset + (np.int64(node) << np.int64(stride)) + key_chunk(key, depth, stride)


def child_code_py(i, lcp, next_ids, end, leaf_size, last):
    """Child code for the group at depth ``end`` that key ``i`` starts (njit and CUDA source)."""
    size = 1
    while i + size < lcp.size and size <= leaf_size and lcp[i + size] >= end:
        size += 1
    if size <= leaf_size:
        return leaf_code(i, size)
    if last:
        # Only a prefix tree gets here: more than leaf_size rules with identical 64 bits, all
        # already expanded into this level's best codes.
        return np.int64(0)
    return np.int64(next_ids[i]) + 1


child_code = numba.njit(cache=True)(child_code_py)


@numba.njit(cache=True)
def is_active(level, leaf_depth, depth):
    """A key with this ``leaf_depth`` has a node at ``depth``: the root, or a group there with
    more than leaf_size keys."""
    return level == 0 or leaf_depth > depth


@numba.njit(cache=True)
def entry_split(entry):
    """(child code, best code) of a packed prefix-tree entry."""
    return np.int64(entry & _LOW32), np.int64(entry >> _U32)


@numba.njit(cache=True)
def node_flags_cpu(lcp, leaf_depth, depth, flags):
    """``flags[i] = 1`` where key ``i`` starts a node at ``depth``."""
    for i in range(lcp.size):
        flags[i] = 1 if (lcp[i] < depth and leaf_depth[i] > depth) else 0


@numba.njit(cache=True)
def inclusive_scan_cpu(flags, out):
    total = 0
    for i in range(flags.size):
        total += flags[i]
        out[i] = total


@numba.njit(cache=True)
def write_level_cpu(
    keys, lcp, leaf_depth, node_ids, next_ids, level, depth, stride, level_offset, leaf_size,
    last, children,
):  # fmt: skip
    """Child codes of one level: each group start at depth ``depth + stride`` writes its slot."""
    end = depth + stride
    for i in range(keys.size):
        if not is_active(level, leaf_depth[i], depth) or lcp[i] >= end:
            continue
        slot = slot_index(level_offset, node_ids[i], stride, keys[i], depth)
        children[slot] = child_code(i, lcp, next_ids, end, leaf_size, last)


@numba.njit(cache=True)
def expand_level_cpu(
    keys, lengths, leaf_depth, node_ids, level, depth, stride, level_offset, best
):  # fmt: skip
    """Prefix expansion: each rule ending in (depth, depth + stride] claims its covered slots."""
    end = depth + stride
    for i in range(keys.size):
        length = np.int64(lengths[i])
        if not is_active(level, leaf_depth[i], depth) or length <= depth or length > end:
            continue
        first = slot_index(level_offset, node_ids[i], stride, keys[i], depth)
        claim = (length << np.int64(32)) | np.int64(i + 1)
        for slot in range(first, first + (np.int64(1) << (end - length))):
            if claim > best[slot]:
                best[slot] = claim


@numba.njit(cache=True)
def pack_entries_cpu(children, best, entries):
    for slot in range(children.size):
        entries[slot] = (np.uint64(best[slot] & 0xFFFFFFFF) << _U32) | np.uint64(children[slot])


def exact_find_py(query, keys, children, level_depth, level_stride, level_offset):
    """Sorted position of ``query`` among ``keys``, or -1 (njit and CUDA source)."""
    root = level_depth[0]
    if root > 0 and not prefix_matches(query, keys[0], root):
        return -1
    node = np.int64(0)
    for level in range(level_depth.size):
        stride = level_stride[level]
        code = np.int64(
            children[slot_index(level_offset[level], node, stride, query, level_depth[level])]
        )
        if code == 0:
            return -1
        if code >= LEAF:
            payload = code - LEAF
            start = payload >> 4
            for j in range(start, start + (payload & 15) + 1):
                if keys[j] == query:
                    return j
            return -1
        node = code - 1
    return -1


def prefix_find_py(
    query, keys, lengths, entries, level_depth, level_stride, level_offset, default_rule
):  # fmt: skip
    """Sorted position of the longest rule prefixing ``query``, or -1 (njit and CUDA source)."""
    best = int(default_rule)
    best_length = 0 if best >= 0 else -1
    root = level_depth[0]
    if root > 0 and not prefix_matches(query, keys[0], root):
        return best
    node = np.int64(0)
    for level in range(level_depth.size):
        stride = level_stride[level]
        entry = entries[slot_index(level_offset[level], node, stride, query, level_depth[level])]
        code, claim = entry_split(entry)
        if claim != 0:
            best = claim - 1
            best_length = int(lengths[best])
        if code == 0:
            return best
        if code >= LEAF:
            payload = code - LEAF
            start = payload >> 4
            for j in range(start, start + (payload & 15) + 1):
                length = int(lengths[j])
                if length > best_length and prefix_matches(query, keys[j], length):
                    best = j
                    best_length = length
            return best
        node = code - 1
    return best


exact_find = numba.njit(cache=True)(exact_find_py)
prefix_find = numba.njit(cache=True)(prefix_find_py)


@numba.njit(cache=True)
def exact_lookup_cpu(
    queries, keys, values, children, level_depth, level_stride, level_offset, out
):  # fmt: skip
    for i in range(queries.size):
        j = exact_find(queries[i], keys, children, level_depth, level_stride, level_offset)
        out[i] = values[j] if j >= 0 else -1


@numba.njit(cache=True)
def prefix_lookup_cpu(
    queries, keys, lengths, values, entries, level_depth, level_stride, level_offset,
    default_rule, out,
):  # fmt: skip
    for i in range(queries.size):
        j = prefix_find(
            queries[i], keys, lengths, entries, level_depth, level_stride, level_offset,
            default_rule,
        )  # fmt: skip
        out[i] = values[j] if j >= 0 else -1
