"""Catalog kernels on the GPU: cheapest offer per product and radix tree lookups, with peers.

Cases (one row each, all timed with CUDA events, median of ``--catalog-repeats`` batches of
``--catalog-batch`` back-to-back launches queued behind untimed ones, so Python's launch cost
stays out of the numbers):

- ``cheapest/*``: P x O offers (int32 merchant, int32 price); bytes = P * O * 8 (245.76 MB
  at 30,000 x 1,024). Three input sets rotate, so no launch reads what the last one
  left in L2 (50-60 MB). Ours: the dense vector kernel in several launch shapes and both
  reductions, and the CSR kernel on the same rows. Peers: torch ``min(dim=1)`` on prices +
  ``gather`` of merchants (ties unresolved), torch ``min(dim=1)`` on packed int64 keys (our
  semantics, the same 8 bytes per offer), CuPy ``argmin`` on prices + ``take``.
- ``radix/*``: K unique uniform 64-bit keys, Q queries, half of them hits; rates in
  lookups/s. Ours: exact lookup and LPM (rules of 24..64 bits; hits extend a rule). Peers: CuPy
  ``searchsorted`` + equality check (exact), and, for LPM, one masked ``searchsorted`` per rule
  length, longest first.

Every GPU result is checked against a peer or the CPU twin before it is timed. torch and CuPy
are imported here only, as benchmark peers. Run: ``python -m gpu_engine bench --suite catalog``
or ``python -m gpu_engine.bench.catalog [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from gpu_engine.bench.catalog_timing import (
    CupyEvent,
    NumbaEvent,
    TorchEvent,
    numba_sync,
    time_ms,
    timed_row,
)

_ROTATION = 3


def add_arguments(parser) -> None:
    parser.add_argument("--catalog-products", type=int, default=30_000)
    parser.add_argument("--catalog-offers", type=int, default=1024)
    parser.add_argument("--catalog-keys", type=int, default=1_000_000)
    parser.add_argument("--catalog-queries", type=int, default=16_000_000)
    parser.add_argument("--catalog-repeats", type=int, default=30)
    parser.add_argument("--catalog-batch", type=int, default=10)
    parser.add_argument(
        "--catalog-part", choices=("all", "cheapest", "radix"), default="all", help="what to run"
    )


def run(args) -> list[dict]:
    from numba import cuda

    if not cuda.is_available():
        return [{"suite": "catalog", "case": "skipped", "note": "no CUDA GPU"}]
    rows = [_device_row()]
    parts = ("cheapest", "radix") if args.catalog_part == "all" else (args.catalog_part,)
    for part in parts:
        bench = _bench_cheapest if part == "cheapest" else _bench_radix
        try:
            rows += bench(args)
        except Exception as exc:  # a broken peer or variant must not hide the other numbers
            rows.append({"suite": "catalog", "case": f"{part}/error", "note": repr(exc)})
    return rows


def _device_row() -> dict:
    import datetime
    import importlib.metadata as metadata

    import numba
    from numba import cuda

    from gpu_engine.device import gpu_name

    device = cuda.get_current_device()
    versions: dict[str, str | None] = {}
    for package in ("numpy", "numba", "numba-cuda", "cupy-cuda13x", "torch"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return {
        "suite": "catalog",
        "case": "device",
        "note": gpu_name(),
        # The simulator's device has no compute capability.
        "compute_capability": ".".join(map(str, getattr(device, "compute_capability", ()))),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "numba_runtime": numba.__version__,
        **versions,
    }


# ---------------------------------------------------------------- cheapest offer


def _bench_cheapest(args) -> list[dict]:
    import cupy
    from numba import cuda

    from gpu_engine.catalog.cheapest_offer import cuda as kernels
    from gpu_engine.catalog.cheapest_offer.select import cheapest_offers_dense

    p, o = args.catalog_products, args.catalog_offers
    nbytes = p * o * 8
    # The rotation sets are consecutive slices of one (3P, O) pair, so that a single launch over
    # all of them (the "x3 in one launch" rows) times the GPU with no host launch gaps.
    rng = cupy.random.default_rng(0)
    all_merchant = rng.integers(0, 1000, (_ROTATION * p, o), dtype=cupy.int32)
    all_price = rng.integers(100, 100_000, (_ROTATION * p, o), dtype=cupy.int32)
    sets = [(all_merchant[s * p : (s + 1) * p], all_price[s * p : (s + 1) * p]) for s in
            range(_ROTATION)]  # fmt: skip
    flat = [(cuda.as_cuda_array(m.ravel()), cuda.as_cuda_array(q.ravel())) for m, q in sets]
    expected = [_packed_min(m, q) for m, q in sets]
    out = tuple(cuda.device_array(p, t) for t in (np.int32, np.int32, np.int64))
    rows = []
    common = {"products": p, "offers": o, "bytes": nbytes}

    def check(name, got_merchant, got_price, s):
        want_merchant, want_price = expected[s]
        ok = bool((cupy.asarray(got_merchant) == want_merchant).all()) and bool(
            (cupy.asarray(got_price) == want_price).all()
        )
        if not ok:
            raise AssertionError(f"{name}: result differs from torch-free packed-key reference")

    def measure(name, launch):
        launch(0)
        check(name, out[0], out[1], 0)
        timing = time_ms(launch, NumbaEvent, repeats=args.catalog_repeats,
                         batch=args.catalog_batch, sync=numba_sync)  # fmt: skip
        rows.append(timed_row(f"cheapest/ours {name}", timing,
                             tb_per_s=round(nbytes / timing[0] / 1e9, 3), **common))  # fmt: skip

    vector_variants = [("shuffle", 128, "nc"), ("shuffle", 128, "plain"), ("shuffle", 128, "cs"),
                       ("shuffle", 256, "plain"), ("shared", 256, "nc")]  # fmt: skip
    for reduction, threads, flavour in vector_variants:

        def launch(i, reduction=reduction, threads=threads, flavour=flavour):
            m, q = flat[i % _ROTATION]
            kernels.launch_dense(m, q, out, reduction=reduction, threads_per_block=threads,
                                 flavour=flavour)  # fmt: skip

        measure(f"vector {reduction} tpb={threads} ld.{flavour}.v4", launch)
    offsets = cuda.to_device(np.arange(p + 1, dtype=np.int64) * o)
    group = kernels.csr_group_for(p, p * o)
    row_variants = [(0, 4, 256), (o, 4, 256), (o, 4, 128), (o, 8, 256), (o, 8, 128)]
    for width, unroll, threads in row_variants:

        def launch_rows(i, width=width, unroll=unroll, threads=threads):
            m, q = flat[i % _ROTATION]
            kernels.launch_csr(
                offsets, m, q, out, reduction="shuffle", threads_per_block=threads, group=group,
                column_index=True, width=width, unroll=unroll,
            )  # fmt: skip

        layout = "csr offsets" if width == 0 else "dense rows"
        measure(f"{layout} group={group} unroll={unroll} tpb={threads}", launch_rows)
    rows += _cheapest_one_launch(args, all_merchant, all_price, expected, common, group)
    # The public wrapper end to end on device arrays (allocates outputs each call).
    public = cheapest_offers_dense(sets[0][0], sets[0][1])
    check("public wrapper", public.merchant, public.price, 0)
    rows += _cheapest_peers(args, sets, expected, common)
    return rows


def _cheapest_one_launch(args, all_merchant, all_price, expected, common, group) -> list[dict]:
    """Each variant once over the 3 sets in one launch: Python's per-launch cost (tens of us
    with Numba, about a kernel's length here) cannot leave the GPU idle inside the timing."""
    import cupy
    from numba import cuda

    from gpu_engine.catalog.cheapest_offer import cuda as kernels

    n = all_merchant.shape[0]
    merchant = cuda.as_cuda_array(all_merchant.ravel())
    price = cuda.as_cuda_array(all_price.ravel())
    out = tuple(cuda.device_array(n, t) for t in (np.int32, np.int32, np.int64))
    offsets = cuda.device_array(1, np.int64)
    want_merchant = cupy.concatenate([m for m, _ in expected])
    want_price = cupy.concatenate([q for _, q in expected])
    variants = {
        "vector shuffle tpb=128 ld.plain.v4": lambda: kernels.launch_dense(
            merchant, price, out, reduction="shuffle", threads_per_block=128, flavour="plain"
        ),
        "vector shuffle tpb=128 ld.nc.v4": lambda: kernels.launch_dense(
            merchant, price, out, reduction="shuffle", threads_per_block=128, flavour="nc"
        ),
        f"dense rows group={group} unroll=8 tpb=128": lambda: kernels.launch_csr(
            offsets, merchant, price, out, reduction="shuffle", threads_per_block=128,
            group=group, column_index=True, width=all_merchant.shape[1], unroll=8,
        ),
        f"dense rows group={group} unroll=4 tpb=256": lambda: kernels.launch_csr(
            offsets, merchant, price, out, reduction="shuffle", threads_per_block=256,
            group=group, column_index=True, width=all_merchant.shape[1], unroll=4,
        ),
    }  # fmt: skip
    rows = []
    for name, launch in variants.items():
        launch()
        if not (bool((cupy.asarray(out[0]) == want_merchant).all())
                and bool((cupy.asarray(out[1]) == want_price).all())):  # fmt: skip
            raise AssertionError(f"{name} over 3 sets differs from the reference")
        median, low, high = time_ms(
            lambda _i, launch=launch: launch(), NumbaEvent, repeats=args.catalog_repeats,
            batch=2, sync=numba_sync,
        )  # fmt: skip
        per_set = (median / _ROTATION, low / _ROTATION, high / _ROTATION)
        rows.append(
            timed_row(f"cheapest/ours {name} (x3 in one launch, per set)", per_set,
                     tb_per_s=round(common["bytes"] / per_set[0] / 1e9, 3), **common)
        )  # fmt: skip
    return rows


def _packed_min(merchant, price):
    """Reference (CuPy): min of price << 32 | merchant + 2**31, decoded."""
    import cupy

    key = (price.astype(cupy.int64) << 32) + merchant.astype(cupy.int64) + 2**31
    best = key.min(axis=1)
    return ((best & 0xFFFFFFFF) - 2**31).astype(cupy.int32), (best >> 32).astype(cupy.int32)


def _cheapest_peers(args, sets, expected, common) -> list[dict]:
    import cupy
    import torch

    nbytes = common["bytes"]
    rows = []
    tsets = [
        (torch.as_tensor(m, device="cuda"), torch.as_tensor(q, device="cuda")) for m, q in sets
    ]
    packed = [
        (q.to(torch.int64) << 32) + m.to(torch.int64) + 2**31 for m, q in tsets
    ]  # precomputed: the peer reads the same 8 bytes per offer that ours does

    def torch_min_gather(i):
        m, q = tsets[i % _ROTATION]
        values, index = q.min(dim=1)
        return m.gather(1, index[:, None]), values

    def torch_packed(i):
        return packed[i % _ROTATION].min(dim=1).values

    def cupy_argmin(i):
        m, q = sets[i % _ROTATION]
        index = cupy.argmin(q, axis=1)
        return cupy.take_along_axis(m, index[:, None], axis=1), q[cupy.arange(q.shape[0]), index]

    merchant_0, price_0 = expected[0]
    _, torch_price = torch_min_gather(0)
    assert bool((cupy.asarray(torch_price) == price_0).all()), "torch min prices differ"
    best = cupy.asarray(torch_packed(0))
    assert bool((((best & 0xFFFFFFFF) - 2**31).astype(cupy.int32) == merchant_0).all())
    assert bool((cupy_argmin(0)[1] == price_0).all()), "cupy argmin prices differ"
    for name, launch, event in (
        ("torch min(dim=1)+gather (prices only)", torch_min_gather, TorchEvent),
        ("torch min(dim=1) on packed int64 keys", torch_packed, TorchEvent),
        ("cupy argmin+take (prices only)", cupy_argmin, CupyEvent),
    ):
        sync = torch.cuda.synchronize if event is TorchEvent else cupy.cuda.Device().synchronize
        timing = time_ms(launch, event, repeats=args.catalog_repeats, batch=args.catalog_batch,
                         sync=sync)  # fmt: skip
        rows.append(timed_row(f"cheapest/peer {name}", timing,
                             tb_per_s=round(nbytes / timing[0] / 1e9, 3), **common))  # fmt: skip
    return rows


# ---------------------------------------------------------------- radix tree


def _bench_radix(args) -> list[dict]:
    import cupy
    from numba import cuda

    from gpu_engine.catalog.radix import cuda as radix_kernels
    from gpu_engine.catalog.radix.tree import radix_tree_build, radix_tree_match

    k, q = args.catalog_keys, args.catalog_queries
    rng = np.random.default_rng(7)
    keys = np.unique(rng.integers(0, 2**64, int(k * 1.01), dtype=np.uint64))[:k]
    rng.shuffle(keys)  # the build sorts; give it real work
    queries = np.where(
        rng.random(q) < 0.5,
        keys[rng.integers(0, keys.size, q)],
        rng.integers(0, 2**64, q, dtype=np.uint64),
    )
    common = {"keys": int(keys.size), "queries": q}
    rows = []
    started = time.perf_counter()
    tree = radix_tree_build(keys)
    cuda.synchronize()
    build_ms = (time.perf_counter() - started) * 1e3
    started = time.perf_counter()
    tree = radix_tree_build(keys)
    cuda.synchronize()
    rows.append({"suite": "catalog", "case": "radix/ours build (exact, host sort included)",
                 "ms": round((time.perf_counter() - started) * 1e3, 2),
                 "first_build_ms": round(build_ms, 1), "strides": str(tree.strides),
                 "root_depth": tree.root_depth, "table_mb": round(tree.table_bytes / 1e6, 2),
                 **common})  # fmt: skip
    query_sets = [cuda.to_device(np.roll(queries, s * 997)) for s in range(_ROTATION)]
    out = cuda.device_array(q, tree.values.dtype)
    arrays = (tree.keys, tree.values, tree.table, tree.level_depth, tree.level_stride,
              tree.level_offset)  # fmt: skip

    def exact(i):
        radix_kernels.exact_lookup_cuda(query_sets[i % _ROTATION], arrays, out)

    sorted_keys = cupy.asarray(np.sort(keys))
    cupy_sets = [cupy.asarray(s) for s in query_sets]

    def cupy_exact(i):
        qs = cupy_sets[i % _ROTATION]
        index = cupy.minimum(cupy.searchsorted(sorted_keys, qs), sorted_keys.size - 1)
        return cupy.where(sorted_keys[index] == qs, index, -1)

    exact(0)
    got = cupy.asarray(out)
    position = cupy_exact(0)
    # values default to the input index: map CuPy's sorted position back through the sort
    order = cupy.asarray(np.argsort(keys, kind="stable").astype(np.int64))
    want = cupy.where(position >= 0, order[cupy.maximum(position, 0)], -1)
    if not bool((got.astype(cupy.int64) == want).all()):
        raise AssertionError("radix exact lookup differs from CuPy searchsorted")
    hit_rate = float((want >= 0).mean())
    for name, launch, event, sync in (
        ("radix/ours exact lookup", exact, NumbaEvent, numba_sync),
        ("radix/peer cupy searchsorted+equality", cupy_exact, CupyEvent,
         cupy.cuda.Device().synchronize),
    ):  # fmt: skip
        timing = time_ms(launch, event, repeats=args.catalog_repeats, batch=args.catalog_batch,
                         sync=sync)  # fmt: skip
        rows.append(timed_row(name, timing, lookups_per_s=round(q / timing[0] * 1e3),
                             hit_rate=round(hit_rate, 4), **common))  # fmt: skip
    rows += _bench_lpm(args, rng, keys, common, radix_tree_build, radix_tree_match)
    return rows


def _bench_lpm(args, rng, keys, common, radix_tree_build, radix_tree_match) -> list[dict]:
    import cupy
    from numba import cuda

    from gpu_engine.catalog.radix import cuda as radix_kernels

    q = args.catalog_queries
    lengths = rng.integers(24, 65, keys.size)
    mask = _length_masks(lengths)
    rules = keys & mask
    picks = rng.integers(0, keys.size, q)
    extended = rules[picks] | (rng.integers(0, 2**64, q, dtype=np.uint64) & ~mask[picks])
    queries = np.where(rng.random(q) < 0.5, extended, rng.integers(0, 2**64, q, dtype=np.uint64))
    started = time.perf_counter()
    tree = radix_tree_build(rules, lengths=lengths)
    cuda.synchronize()
    rows = [{"suite": "catalog", "case": "radix/ours build (LPM, first call)",
             "ms": round((time.perf_counter() - started) * 1e3, 2), "strides": str(tree.strides),
             "root_depth": tree.root_depth, "table_mb": round(tree.table_bytes / 1e6, 2),
             "rules": int(tree.n_keys), **common}]  # fmt: skip
    query_sets = [cuda.to_device(np.roll(queries, s * 997)) for s in range(_ROTATION)]
    out = cuda.device_array(q, tree.values.dtype)
    arrays = (tree.keys, tree.lengths, tree.values, tree.table, tree.level_depth,
              tree.level_stride, tree.level_offset)  # fmt: skip

    def lpm(i):
        radix_kernels.prefix_lookup_cuda(query_sets[i % _ROTATION], arrays, tree.default_rule, out)

    lpm(0)
    got = out.copy_to_host()
    sample = slice(0, 200_000)
    cpu_tree = radix_tree_build(rules, lengths=lengths, device="cpu")
    if not np.array_equal(got[sample], radix_tree_match(cpu_tree, queries[sample])):
        raise AssertionError("radix LPM on the GPU differs from the CPU twin")
    by_length = _cupy_lpm_tables(rules, lengths)
    cupy_sets = [cupy.asarray(s) for s in query_sets]

    def cupy_lpm(i):
        qs = cupy_sets[i % _ROTATION]
        result = cupy.full(qs.size, -1, cupy.int64)
        for length_mask, table_keys, table_values in by_length:
            masked = qs & length_mask
            index = cupy.minimum(cupy.searchsorted(table_keys, masked), table_keys.size - 1)
            found = (table_keys[index] == masked) & (result < 0)
            result = cupy.where(found, table_values[index], result)
        return result

    if not np.array_equal(cupy.asnumpy(cupy_lpm(0)), got.astype(np.int64)):
        raise AssertionError("CuPy LPM peer differs from the radix tree")
    hit_rate = float((got >= 0).mean())
    for name, launch, event, sync, repeats in (
        ("radix/ours LPM lookup", lpm, NumbaEvent, numba_sync, args.catalog_repeats),
        ("radix/peer cupy LPM (searchsorted per length)", cupy_lpm, CupyEvent,
         cupy.cuda.Device().synchronize, 3),
    ):  # fmt: skip
        timing = time_ms(launch, event, repeats=repeats, batch=2 if repeats == 3 else
                         args.catalog_batch, sync=sync)  # fmt: skip
        rows.append(timed_row(name, timing, lookups_per_s=round(q / timing[0] * 1e3),
                             hit_rate=round(hit_rate, 4), **common))  # fmt: skip
    return rows


def _length_masks(lengths):
    """uint64 masks keeping the first ``length`` bits (lengths >= 1)."""
    low_bits = (np.uint64(1) << (64 - lengths).astype(np.uint64)) - np.uint64(1)
    return np.where(lengths >= 64, ~np.uint64(0), ~low_bits).astype(np.uint64)


def _cupy_lpm_tables(rules, lengths):
    """Per rule length, longest first: (mask, sorted masked keys, their values) on the GPU."""
    import cupy

    tables = []
    for length in sorted(set(lengths.tolist()), reverse=True):
        chosen = np.nonzero(lengths == length)[0]
        order = np.argsort(rules[chosen], kind="stable")
        mask = _length_masks(np.array([length]))[0]
        tables.append((mask, cupy.asarray(rules[chosen][order]),
                       cupy.asarray(chosen[order].astype(np.int64))))  # fmt: skip
    return tables


# ---------------------------------------------------------------- standalone entry


def _print_table(rows):
    columns = ["case", "ms", "tb_per_s", "lookups_per_s", "strides", "note"]
    print(" | ".join(columns))
    for row in rows:
        print(" | ".join(str(row.get(c, "")) for c in columns))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpu_engine.bench.catalog")
    add_arguments(parser)
    parser.add_argument("--json", default=None, help="also write the rows to this file")
    args = parser.parse_args(argv)
    rows = run(args)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=2)
    _print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
