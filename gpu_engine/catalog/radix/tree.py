"""GPU radix tree (after the Flavors library, GTC 2018 S8401) for batched key lookups.

Two uses in Smart Cart: GTIN -> product id for a whole offer feed in one batched exact lookup,
and postal code -> shipping zone by longest-prefix match (LPM) when pricing many carts.

Public API::

    radix_tree_build(keys, *, values=None, lengths=None, strides=None, leaf_size=8,
                     memory_budget=None, device="auto") -> RadixTree
        keys: 64-bit unsigned keys (any integer array with values in [0, 2**64)).
        values: one int32/int64 per key, returned by lookups (default: the key's input index).
        lengths: None for an exact-match tree of full 64-bit keys; else one prefix length in
            bits (0..64) per key, making an LPM tree of rules "the first ``length`` bits of the
            key" (bits past the length are ignored; length 0 is the catch-all rule).
        Duplicate keys (or duplicate (key, length) rules): the first one in input order wins.
        strides: bits per tree level, most significant first; None lets the cost model of
            :mod:`gpu_engine.catalog.radix.plan` choose them from the key statistics.
        leaf_size: 1..16 keys a leaf may hold (a lookup scans them; see radix_plan).
        memory_budget: bytes the child tables may take (default max(64 KiB, 16 bytes per key)).
    radix_tree_lookup(tree, queries) -> values   exact match of uint64 queries, -1 if absent
    radix_tree_match(tree, queries) -> values    LPM tree: value of the longest rule that is a
                                                 prefix of the query, -1 if none
    radix_tree_plan(keys, *, lengths=None, leaf_size=8, memory_budget=None) -> strides
    radix_tree_warmup(*, device="auto") -> str   compile the kernels / njit twins
    RadixTree: the built tree (read-only; ``root_depth``, ``strides``, ``n_keys``,
        ``table_bytes``, ``device``). The levels start at ``root_depth``, the number of leading
        bits all keys share (checked once per lookup against the first key); explicit
        ``strides`` count from there.

String keys (postal codes) map to bit keys with :mod:`gpu_engine.catalog.radix.codec`.

Structure. Keys are sorted and deduplicated on the host; everything else runs on the device
(the CPU twin, :mod:`gpu_engine.catalog.radix.cpu`, runs the same steps with ``@njit``):

1. statistics: ``lcp`` of neighbouring keys and each key's ``leaf_depth`` (radix_plan), summed
   into a small histogram that the cost model reads to choose the strides;
2. node borders: at each level's depth, the groups of keys sharing that prefix and holding more
   than ``leaf_size`` keys are the nodes; an inclusive scan of the border flags numbers them;
3. child tables: one thread per group start at the level's end depth writes its slot: a leaf
   (a run of at most ``leaf_size`` sorted keys) when the group is small, else the child node;
4. LPM only: each rule ending inside a level claims the slots it covers (controlled prefix
   expansion, longest rule wins by an atomic max), packed next to the child codes.

A lookup walks one table entry per level from the root until it meets an empty slot or a leaf,
then compares the query with the leaf's keys (exact) or the leaf's rules (LPM).

``device``: "auto" uses a real GPU when present (never Numba's simulator), else the CPU twin;
"cuda"/"cpu" force one. A tree lives on its device; queries may be NumPy or device arrays
(results come back the same kind).
"""

from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from gpu_engine.catalog.radix import cpu as radix_cpu
from gpu_engine.catalog.radix import plan as radix_plan
from gpu_engine.device import resolve_device

_UINT64_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)


@dataclass(frozen=True)
class RadixTree:
    device: str
    root_depth: int
    strides: tuple[int, ...]
    leaf_size: int
    n_keys: int
    prefix: bool
    table_bytes: int
    default_rule: int
    # NumPy arrays for a CPU tree, numba device arrays (untyped) for a CUDA tree.
    keys: Any
    lengths: Any
    values: Any
    table: Any
    level_depth: Any
    level_stride: Any
    level_offset: Any


def radix_tree_device(device: str = "auto") -> str:
    """Resolve ``device`` to "cuda" or "cpu"; "auto" never selects the simulator
    (:func:`gpu_engine.device.resolve_device`)."""
    return resolve_device(device)


def radix_tree_build(
    keys,
    *,
    values=None,
    lengths=None,
    strides=None,
    leaf_size: int = radix_plan.DEFAULT_LEAF_SIZE,
    memory_budget: int | None = None,
    device: str = "auto",
) -> RadixTree:
    """Build a radix tree (see the module docstring)."""
    device = radix_tree_device(device)
    _check_leaf_size(leaf_size)
    keys, lengths, values = _sorted_unique(keys, lengths, values)
    prefix = lengths is not None
    entry_bytes = 8 if prefix else 4
    if device == "cuda":
        from numba import cuda

        from gpu_engine.catalog.radix import cuda as radix_kernels

        keys_device = cuda.to_device(keys)
        lcp, leaf_depth, histogram = radix_kernels.key_stats_cuda(keys_device, leaf_size)
    else:
        lcp, leaf_depth, histogram = _key_stats_cpu(keys, leaf_size)
    root_depth = _root_depth(keys, lengths)
    stats = radix_plan.KeyStats(histogram, root_depth)
    if strides is None:
        strides = radix_plan.plan_strides(
            stats, memory_budget=_budget(memory_budget, keys.size), entry_bytes=entry_bytes
        )
    strides = _checked_strides(strides, root_depth, stats.required_depth())
    depths = root_depth + np.concatenate([[0], np.cumsum(strides)[:-1]]).astype(np.int64)
    level_slots = [int(stats.nodes[d]) << s for d, s in zip(depths, strides, strict=True)]
    offsets = np.concatenate([[0], np.cumsum(level_slots)[:-1]]).astype(np.int64)
    layout = (depths, np.asarray(strides, np.int64), offsets, stats, leaf_size)
    if device == "cuda":
        lengths_device = _to_device(lengths)
        table = _build_levels_cuda(
            keys_device, lcp, leaf_depth, lengths_device if prefix else None, layout
        )
        arrays = [keys_device, lengths_device, cuda.to_device(values), table]
        arrays += [cuda.to_device(a) for a in layout[:3]]
    else:
        table = _build_levels_cpu(keys, lcp, leaf_depth, lengths, layout)
        arrays = [keys, lengths, values, table, *layout[:3]]
    default_rule = 0 if prefix and keys.size and lengths[0] == 0 else -1
    return RadixTree(
        device, root_depth, tuple(int(s) for s in strides), leaf_size, int(keys.size), prefix,
        sum(level_slots) * entry_bytes, default_rule, *arrays,
    )  # fmt: skip


def radix_tree_plan(
    keys, *, lengths=None, leaf_size: int = radix_plan.DEFAULT_LEAF_SIZE, memory_budget=None
) -> tuple[int, ...]:
    """The strides ``radix_tree_build`` would choose for these keys (computed on the CPU)."""
    _check_leaf_size(leaf_size)
    keys, lengths, _ = _sorted_unique(keys, lengths, None)
    stats = radix_plan.KeyStats(_key_stats_cpu(keys, leaf_size)[2], _root_depth(keys, lengths))
    entry_bytes = 8 if lengths is not None else 4
    return radix_plan.plan_strides(
        stats, memory_budget=_budget(memory_budget, keys.size), entry_bytes=entry_bytes
    )


def radix_tree_lookup(tree: RadixTree, queries):
    """Exact lookup: the value of each query key, or -1 when the tree does not hold it."""
    if tree.prefix:
        raise ValueError("radix_tree_lookup needs an exact tree; use radix_tree_match for LPM")
    arrays = (tree.keys, tree.values, tree.table, *_levels(tree))
    if tree.device == "cuda":
        from gpu_engine.catalog.radix import cuda as radix_kernels

        return _on_device(
            tree, queries, lambda q, out: radix_kernels.exact_lookup_cuda(q, arrays, out)
        )
    queries = _host_queries(queries)
    out = np.empty(queries.size, tree.values.dtype)
    radix_cpu.exact_lookup_cpu(queries, *arrays, out)
    return out


def radix_tree_match(tree: RadixTree, queries):
    """Longest-prefix match: the value of the longest rule prefixing each query, or -1."""
    if not tree.prefix:
        raise ValueError("radix_tree_match needs a tree built with lengths")
    arrays = (tree.keys, tree.lengths, tree.values, tree.table, *_levels(tree))
    if tree.device == "cuda":
        from gpu_engine.catalog.radix import cuda as radix_kernels

        return _on_device(
            tree,
            queries,
            lambda q, out: radix_kernels.prefix_lookup_cuda(q, arrays, tree.default_rule, out),
        )
    queries = _host_queries(queries)
    out = np.empty(queries.size, tree.values.dtype)
    radix_cpu.prefix_lookup_cpu(queries, *arrays, tree.default_rule, out)
    return out


def radix_tree_warmup(*, device: str = "auto") -> str:
    """Compile build and lookup code for ``device`` on tiny inputs; returns the device."""
    device = radix_tree_device(device)
    keys = np.array([3, 1 << 40, 7 << 60, 5], dtype=np.uint64)
    exact = radix_tree_build(keys, device=device, leaf_size=2)
    radix_tree_lookup(exact, keys)
    lengths = np.array([0, 30, 8, 64], dtype=np.int64)
    rules = radix_tree_build(keys, lengths=lengths, device=device, leaf_size=2)
    radix_tree_match(rules, keys)
    return device


def _levels(tree):
    return tree.level_depth, tree.level_stride, tree.level_offset


def _check_leaf_size(leaf_size):
    if not 1 <= leaf_size <= radix_plan.MAX_LEAF_SIZE:
        raise ValueError(f"leaf_size must be in 1..{radix_plan.MAX_LEAF_SIZE}, got {leaf_size}")


def _budget(memory_budget, n_keys):
    return memory_budget if memory_budget is not None else max(64 * 1024, 16 * n_keys)


def _checked_strides(strides, root_depth, required_depth):
    strides = tuple(int(s) for s in strides)
    if not strides or any(not 1 <= s <= radix_plan.MAX_STRIDE for s in strides):
        raise ValueError(f"strides must be 1..{radix_plan.MAX_STRIDE} bits each, got {strides}")
    end = root_depth + sum(strides)
    if end > 64:
        raise ValueError(f"strides end at bit {end} (the root is at {root_depth}), past 64")
    if end < required_depth:
        raise ValueError(
            f"strides end at bit {end} (the root is at {root_depth}) but these keys need "
            f"{required_depth} before every leaf holds at most leaf_size keys"
        )
    return strides


def _root_depth(keys, lengths):
    """Leading bits shared by every key, where the tree starts (at most 63).

    A prefix tree starts above its shortest non-empty rule, whose slots the root must expand.
    """
    if keys.size == 0:
        return 0
    common = 64 if keys.size == 1 else radix_plan.clz64(keys[0] ^ keys[-1])
    if lengths is not None and (lengths > 0).any():
        common = min(common, int(lengths[lengths > 0].min()) - 1)
    return min(common, 63)


def _as_uint64(name, values) -> np.ndarray:
    if not isinstance(values, np.ndarray):
        # Python ints past 2**63 would turn a plain list into float64: convert one by one.
        values = list(values)
        if any(not isinstance(v, (int, np.integer)) or isinstance(v, bool) for v in values):
            raise TypeError(f"{name} must be integers")
        if any(v < 0 or v > 0xFFFFFFFFFFFFFFFF for v in values):
            raise ValueError(f"{name} must be unsigned 64-bit (non-negative) integers")
        return np.array([int(v) for v in values], dtype=np.uint64)
    array = values
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {array.shape}")
    if array.size == 0:
        return np.zeros(0, np.uint64)
    if array.dtype == object or not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"{name} must be an integer array, got {array.dtype}")
    if np.issubdtype(array.dtype, np.signedinteger) and array.min() < 0:
        raise ValueError(f"{name} must be non-negative (unsigned 64-bit keys)")
    return np.ascontiguousarray(array, dtype=np.uint64)


def _sorted_unique(keys, lengths, values):
    """Sort by (key, length), keep the first of equal entries, align values."""
    keys = _as_uint64("keys", keys)
    n = keys.size
    if values is None:
        values = np.arange(n, dtype=np.int32 if n < 2**31 else np.int64)
    else:
        values = np.asarray(values)
        if values.shape != (n,) or not np.issubdtype(values.dtype, np.integer):
            raise ValueError("values must be integers, one per key")
        values = values.astype(values.dtype if values.dtype in (np.int32, np.int64) else np.int64)
    if lengths is not None:
        lengths = np.asarray(lengths)
        if lengths.shape != (n,) or not np.issubdtype(lengths.dtype, np.integer):
            raise ValueError("lengths must be integers, one per key")
        if n and (lengths.min() < 0 or lengths.max() > 64):
            raise ValueError("lengths must be within 0..64 bits")
        lengths = lengths.astype(np.uint8)
        keys = keys & _prefix_masks(lengths)
        order = np.lexsort((lengths, keys))
    else:
        order = np.argsort(keys, kind="stable")
    keys = keys[order]
    values = values[order]
    keep = np.ones(n, bool)
    if n:
        keep[1:] = keys[1:] != keys[:-1]
        if lengths is not None:
            lengths = lengths[order]
            keep[1:] |= lengths[1:] != lengths[:-1]
            lengths = np.ascontiguousarray(lengths[keep])
    keys = np.ascontiguousarray(keys[keep])
    if keys.size >= radix_cpu.MAX_LEAF_KEYS:
        raise ValueError(f"at most {radix_cpu.MAX_LEAF_KEYS - 1} distinct keys per tree")
    return keys, lengths, np.ascontiguousarray(values[keep])


def _prefix_masks(lengths):
    shift = (64 - lengths.astype(np.int64)).clip(max=63).astype(np.uint64)
    return np.where(lengths == 0, np.uint64(0), _UINT64_ONES << shift).astype(np.uint64)


def _key_stats_cpu(keys, leaf_size):
    lcp = np.empty(keys.size, np.int32)
    radix_plan.key_lcp_cpu(keys, lcp)
    leaf_depth = np.empty(keys.size, np.int32)
    radix_plan.key_leaf_depth_cpu(lcp, leaf_size, leaf_depth)
    histogram = np.zeros((66, 65), np.int64)
    radix_plan.key_histogram_cpu(lcp, leaf_depth, histogram)
    return lcp, leaf_depth, histogram


def _build_levels_cpu(keys, lcp, leaf_depth, lengths, layout):
    depths, strides, offsets, stats, leaf_size = layout
    total = int(offsets[-1]) + (int(stats.nodes[depths[-1]]) << int(strides[-1]))
    children = np.zeros(total, np.uint32)
    best = np.zeros(total if lengths is not None else 0, np.int64)
    node_ids = np.zeros(keys.size, np.int32)
    for level in range(depths.size):
        depth, stride, last = int(depths[level]), int(strides[level]), level == depths.size - 1
        next_ids = node_ids
        if not last:
            next_ids = np.empty(keys.size, np.int32)
            radix_cpu.node_flags_cpu(lcp, leaf_depth, depth + stride, next_ids)
            radix_cpu.inclusive_scan_cpu(next_ids, next_ids)
            next_ids -= 1
        radix_cpu.write_level_cpu(
            keys, lcp, leaf_depth, node_ids, next_ids, level, depth, stride,
            int(offsets[level]), leaf_size, last, children,
        )  # fmt: skip
        if lengths is not None:
            radix_cpu.expand_level_cpu(
                keys, lengths, leaf_depth, node_ids, level, depth, stride, int(offsets[level]), best
            )  # fmt: skip
        node_ids = next_ids
    if lengths is None:
        return children
    entries = np.empty(total, np.uint64)
    radix_cpu.pack_entries_cpu(children, best, entries)
    return entries


def _build_levels_cuda(keys, lcp, leaf_depth, lengths, layout):
    """Device twin of ``_build_levels_cpu``; ``lengths`` is a device array or None."""
    from gpu_engine.catalog.radix import cuda as k

    depths, strides, offsets, stats, leaf_size = layout
    total = int(offsets[-1]) + (int(stats.nodes[depths[-1]]) << int(strides[-1]))
    children = k.zeros_cuda(total, np.uint32)
    best = k.zeros_cuda(total, np.int64) if lengths is not None else None
    node_ids = k.zeros_cuda(keys.shape[0], np.int32)
    for level in range(depths.size):
        depth, stride, last = int(depths[level]), int(strides[level]), level == depths.size - 1
        next_ids = node_ids
        if not last:
            next_ids, count = k.node_ids_cuda(lcp, leaf_depth, depth + stride)
            if count != stats.nodes[depth + stride]:
                raise RuntimeError(
                    f"node scan found {count}, statistics {stats.nodes[depth + stride]}"
                )
        plan = (level, depth, stride, int(offsets[level]), leaf_size, last)
        k.write_level_cuda(keys, lcp, leaf_depth, node_ids, next_ids, plan, children)
        if lengths is not None:
            k.expand_level_cuda(keys, lengths, leaf_depth, node_ids, plan[:4], best)
        node_ids = next_ids
    return children if lengths is None else k.pack_entries_cuda(children, best)


def _to_device(array):
    from numba import cuda

    return cuda.to_device(array if array is not None else np.zeros(1, np.uint8))


def _host_queries(queries):
    if not isinstance(queries, np.ndarray) and _is_device_array(queries):
        raise ValueError("this tree lives on the CPU; pass NumPy queries")
    return _as_uint64("queries", queries)


def _is_device_array(array) -> bool:
    if isinstance(array, np.ndarray):
        return False
    from numba import cuda

    if numba.config.ENABLE_CUDASIM:
        return cuda.devicearray.is_cuda_ndarray(array)
    return cuda.is_cuda_array(array)


def _on_device(tree, queries, launch):
    from numba import cuda

    if _is_device_array(queries):
        if not numba.config.ENABLE_CUDASIM:
            queries = cuda.as_cuda_array(queries)
        if queries.dtype != np.uint64 or queries.ndim != 1:
            raise TypeError("device queries must be a 1-D uint64 array")
        out = cuda.device_array(queries.shape[0], tree.values.dtype)
        launch(queries, out)
        return out
    host = _host_queries(queries)
    out = cuda.device_array(host.size, tree.values.dtype)
    launch(cuda.to_device(host), out)
    return out.copy_to_host()
