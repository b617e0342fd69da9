"""Radix tree: exact and longest-prefix lookups, CPU twin and CUDA (simulator) vs brute force."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_engine.catalog.radix import plan as radix_plan
from gpu_engine.catalog.radix.tree import (
    radix_tree_build,
    radix_tree_device,
    radix_tree_lookup,
    radix_tree_match,
    radix_tree_plan,
    radix_tree_warmup,
)

DEVICES = ["cpu", "cuda"]  # "cuda" is Numba's simulator here and the real GPU on the device
MASK64 = (1 << 64) - 1


def brute_exact(keys, values, queries):
    table = {}
    for key, value in zip(keys.tolist(), values.tolist(), strict=True):
        table.setdefault(key, value)  # first occurrence wins
    return np.array([table.get(q, -1) for q in queries.tolist()], dtype=np.int64)


def brute_match(keys, lengths, values, queries):
    rules = {}
    for key, length, value in zip(keys.tolist(), lengths.tolist(), values.tolist(), strict=True):
        mask = MASK64 ^ ((1 << (64 - length)) - 1)
        rules.setdefault((key & mask, length), value)
    out = []
    for q in queries.tolist():
        best, best_length = -1, -1
        for (key, length), value in rules.items():
            mask = MASK64 ^ ((1 << (64 - length)) - 1)
            if q & mask == key and length > best_length:
                best, best_length = value, length
        out.append(best)
    return np.array(out, dtype=np.int64)


def random_keys(rng, n, kind):
    if kind == "uniform":
        return rng.integers(0, 2**64, n, dtype=np.uint64)
    if kind == "gtin":  # 14-digit numbers: the top 17 bits are always zero
        return rng.integers(10**12, 10**14, n, dtype=np.uint64)
    # clustered: a few shared prefixes with dense low bits, the hard case for fixed strides
    bases = rng.integers(0, 2**64, 4, dtype=np.uint64) & np.uint64(0xFFFFFFFFFF000000)
    return bases[rng.integers(0, 4, n)] | rng.integers(0, 2**12, n, dtype=np.uint64)


def queries_for(rng, keys, n_random=40):
    hits = keys[rng.integers(0, keys.size, min(keys.size, 60))] if keys.size else keys
    near = hits ^ np.uint64(1)
    noise = rng.integers(0, 2**64, n_random, dtype=np.uint64)
    return np.concatenate([hits, near, noise]).astype(np.uint64)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", ["uniform", "gtin", "clustered"])
def test_exact_lookup_matches_brute_force(device, kind):
    rng = np.random.default_rng(len(kind))
    keys = random_keys(rng, 150, kind)
    values = rng.integers(0, 10**9, keys.size)
    tree = radix_tree_build(keys, values=values, device=device)
    queries = queries_for(rng, keys)
    np.testing.assert_array_equal(
        radix_tree_lookup(tree, queries), brute_exact(keys, values, queries)
    )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("leaf_size", [1, 3, 16])
def test_exact_lookup_with_explicit_strides_and_leaf_sizes(device, leaf_size):
    rng = np.random.default_rng(leaf_size)
    keys = random_keys(rng, 60, "clustered")
    strides = (6,) * 10 + (4,)
    tree = radix_tree_build(keys, strides=strides, leaf_size=leaf_size, device=device)
    assert tree.strides == strides
    queries = queries_for(rng, keys)
    np.testing.assert_array_equal(
        radix_tree_lookup(tree, queries), brute_exact(keys, np.arange(keys.size), queries)
    )


@pytest.mark.parametrize("device", DEVICES)
def test_duplicate_keys_keep_the_first_value(device):
    keys = np.array([9, 4, 9, 4, 7], dtype=np.uint64)
    tree = radix_tree_build(keys, values=[10, 20, 30, 40, 50], device=device)
    assert tree.n_keys == 3
    np.testing.assert_array_equal(radix_tree_lookup(tree, [4, 7, 9, 5]), [20, 50, 10, -1])


@pytest.mark.parametrize("device", DEVICES)
def test_empty_and_single_key_trees(device):
    empty = radix_tree_build(np.zeros(0, np.uint64), device=device)
    np.testing.assert_array_equal(radix_tree_lookup(empty, [0, 1, 2**63]), [-1, -1, -1])
    assert radix_tree_lookup(empty, np.zeros(0, np.uint64)).shape == (0,)
    single = radix_tree_build([2**64 - 1], values=[5], device=device)
    np.testing.assert_array_equal(radix_tree_lookup(single, [2**64 - 1, 2**64 - 2, 0]), [5, -1, -1])
    zero = radix_tree_build([0], device=device)
    np.testing.assert_array_equal(radix_tree_lookup(zero, [0, 1]), [0, -1])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed", [0, 1])
def test_longest_prefix_match_matches_brute_force(device, seed):
    rng = np.random.default_rng(seed)
    keys = random_keys(rng, 90, "clustered")
    lengths = rng.choice([0, 1, 7, 30, 40, 41, 52, 63, 64], keys.size)
    values = rng.integers(0, 1000, keys.size)
    tree = radix_tree_build(keys, lengths=lengths, values=values, device=device)
    extended = keys | rng.integers(0, 2**20, keys.size, dtype=np.uint64)
    queries = np.concatenate([extended, queries_for(rng, keys)])
    np.testing.assert_array_equal(
        radix_tree_match(tree, queries), brute_match(keys, lengths, values, queries)
    )


@pytest.mark.parametrize("device", DEVICES)
def test_prefix_lengths_zero_and_full(device):
    keys = np.array([0xAB << 56, 0xABCD << 48, 0x1234, 0xABCD << 48], dtype=np.uint64)
    lengths = [0, 16, 64, 64]
    tree = radix_tree_build(keys, lengths=lengths, values=[1, 2, 3, 4], device=device)
    queries = [0xABCD << 48, (0xABCD << 48) | 1, 0xABCE << 48, 0x1234, 0x1235]
    # length 0 catches everything; 16 bits beat it; the full 64-bit rule only matches itself
    np.testing.assert_array_equal(radix_tree_match(tree, queries), [4, 2, 1, 3, 1])
    without_default = radix_tree_build(keys[1:], lengths=lengths[1:], device=device)
    np.testing.assert_array_equal(radix_tree_match(without_default, [0xABCE << 48]), [-1])


@pytest.mark.parametrize("device", DEVICES)
def test_many_rules_with_identical_bits(device):
    """More than leaf_size rules sharing all 64 bits: only prefix expansion can hold them."""
    lengths = np.arange(0, 64, 3)
    keys = np.zeros(lengths.size, np.uint64)
    tree = radix_tree_build(keys, lengths=lengths, leaf_size=2, device=device)
    queries = np.array([0, 1 << 5, 1 << 20, 1 << 63], dtype=np.uint64)
    np.testing.assert_array_equal(
        radix_tree_match(tree, queries),
        brute_match(keys, lengths, np.arange(lengths.size), queries),
    )


@pytest.mark.parametrize("device", DEVICES)
def test_duplicate_rules_keep_the_first_value(device):
    keys = np.array([0xF0 << 56, 0xFF << 56, 0xF0 << 56], dtype=np.uint64)
    tree = radix_tree_build(keys, lengths=[4, 4, 8], values=[1, 2, 3], device=device)
    assert tree.n_keys == 2  # 0xF0 and 0xFF agree on their first 4 bits
    np.testing.assert_array_equal(radix_tree_match(tree, [0xF0 << 56, 0xF1 << 56]), [3, 1])


@pytest.mark.slow
@given(
    keys=st.lists(st.integers(0, 2**64 - 1), max_size=40),
    extra=st.lists(st.integers(0, 2**64 - 1), max_size=10),
    leaf_size=st.integers(1, 16),
)
@settings(max_examples=60, deadline=None)
def test_cpu_exact_lookup_on_any_keys(keys, extra, leaf_size):
    keys = np.array(keys, dtype=np.uint64)
    tree = radix_tree_build(keys, leaf_size=leaf_size, device="cpu")
    queries = np.concatenate([keys, np.array(extra, dtype=np.uint64)])
    np.testing.assert_array_equal(
        radix_tree_lookup(tree, queries), brute_exact(keys, np.arange(keys.size), queries)
    )


@pytest.mark.slow
@given(
    rules=st.lists(st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 64)), max_size=30),
    queries=st.lists(st.integers(0, 2**64 - 1), max_size=10),
    leaf_size=st.integers(1, 16),
)
@settings(max_examples=60, deadline=None)
def test_cpu_prefix_match_on_any_rules(rules, queries, leaf_size):
    keys = np.array([k for k, _ in rules], dtype=np.uint64)
    lengths = np.array([n for _, n in rules], dtype=np.int64)
    tree = radix_tree_build(keys, lengths=lengths, leaf_size=leaf_size, device="cpu")
    # rule keys themselves (and their neighbours) exercise every level
    probe = np.concatenate([keys, keys ^ np.uint64(1), np.array(queries, dtype=np.uint64)])
    np.testing.assert_array_equal(
        radix_tree_match(tree, probe), brute_match(keys, lengths, np.arange(keys.size), probe)
    )


@pytest.mark.cudasim
@given(keys=st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=24), seed=st.integers(0, 99))
@settings(max_examples=6, deadline=None)
def test_kernels_match_cpu_twin_on_any_keys(keys, seed):
    rng = np.random.default_rng(seed)
    keys = np.array(keys, dtype=np.uint64)
    lengths = rng.integers(0, 65, keys.size)
    queries = np.concatenate([keys, rng.integers(0, 2**64, 8, dtype=np.uint64)])
    for build_args, find in (({}, radix_tree_lookup), ({"lengths": lengths}, radix_tree_match)):
        cpu = radix_tree_build(keys, leaf_size=2, device="cpu", **build_args)
        gpu = radix_tree_build(keys, leaf_size=2, device="cuda", **build_args)
        assert (gpu.strides, gpu.root_depth) == (cpu.strides, cpu.root_depth)
        np.testing.assert_array_equal(gpu.table.copy_to_host(), cpu.table)
        np.testing.assert_array_equal(find(gpu, queries), find(cpu, queries))


@pytest.mark.cudasim
def test_device_queries_stay_on_the_device():
    from numba import cuda

    tree = radix_tree_build([5, 6, 7], device="cuda")
    out = radix_tree_lookup(tree, cuda.to_device(np.array([7, 8], dtype=np.uint64)))
    np.testing.assert_array_equal(out.copy_to_host(), [2, -1])


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"strides": (25,)}, "1..24"),
        ({"strides": (20, 20, 20, 20)}, "past 64"),
        ({"strides": (1,)}, "need"),
        ({"leaf_size": 0}, "leaf_size"),
        ({"leaf_size": 17}, "leaf_size"),
    ],
)
def test_bad_configuration_is_refused(kwargs, error):
    keys = np.arange(1000, dtype=np.uint64) * np.uint64(2**40)
    with pytest.raises(ValueError, match=error):
        radix_tree_build(keys, device="cpu", **kwargs)


def test_bad_keys_are_refused():
    with pytest.raises(ValueError, match="non-negative"):
        radix_tree_build([-1, 2], device="cpu")
    with pytest.raises(ValueError, match=r"0\.\.64"):
        radix_tree_build([1, 2], lengths=[3, 65], device="cpu")
    with pytest.raises(TypeError, match="integer"):
        radix_tree_build([1.5], device="cpu")
    with pytest.raises(TypeError, match="integer"):
        radix_tree_build(np.array([1.5]), device="cpu")
    exact = radix_tree_build([1, 2], device="cpu")
    with pytest.raises(ValueError, match="lengths"):
        radix_tree_match(exact, [1])
    rules = radix_tree_build([1, 2], lengths=[64, 64], device="cpu")
    with pytest.raises(ValueError, match="exact"):
        radix_tree_lookup(rules, [1])


def test_plan_fits_the_budget_and_skips_shared_leading_bits():
    rng = np.random.default_rng(3)
    gtins = rng.integers(10**12, 10**14, 5000, dtype=np.uint64)
    tree = radix_tree_build(gtins, device="cpu", memory_budget=64 * 1024)
    assert tree.root_depth >= 17  # GTIN-14 < 2**47
    assert tree.table_bytes <= 64 * 1024
    assert radix_tree_plan(gtins, memory_budget=64 * 1024) == tree.strides


def test_a_larger_budget_never_plans_more_accesses():
    rng = np.random.default_rng(4)
    keys = np.sort(random_keys(rng, 4000, "uniform"))
    tree = radix_tree_build(keys, device="cpu")
    stats = radix_plan.KeyStats(_histogram(keys, 8), tree.root_depth)
    costs = []
    for budget in (4096, 32768, 1 << 20):
        strides = radix_plan.plan_strides(stats, memory_budget=budget, entry_bytes=4)
        accesses, size = radix_plan.plan_cost(stats, strides, entry_bytes=4)
        assert size <= budget
        costs.append(accesses)
    assert costs == sorted(costs, reverse=True)
    assert costs[-1] < 2.5  # one table read, the leaf and little else


def test_node_borders_give_one_child_table_per_crowded_prefix():
    rng = np.random.default_rng(5)
    keys = np.unique(rng.integers(0, 2**64, 3000, dtype=np.uint64))
    tree = radix_tree_build(keys, device="cpu", strides=(12, 12), leaf_size=4)
    assert tree.root_depth == 0
    chunks, counts = np.unique(keys >> np.uint64(52), return_counts=True)
    crowded = int((counts > 4).sum())  # these root slots need a level-1 node
    assert tree.table.size == 4096 * (1 + crowded)
    assert np.count_nonzero(tree.table[:4096]) == chunks.size


def test_auto_never_picks_the_simulator_and_warmup_runs():
    assert radix_tree_device("auto") in ("cpu", "cuda")
    assert radix_tree_warmup(device="cpu") == "cpu"


def _histogram(keys, leaf_size):
    lcp = np.empty(keys.size, np.int32)
    radix_plan.key_lcp_cpu(keys, lcp)
    leaf_depth = np.empty(keys.size, np.int32)
    radix_plan.key_leaf_depth_cpu(lcp, leaf_size, leaf_depth)
    histogram = np.zeros((66, 65), np.int64)
    radix_plan.key_histogram_cpu(lcp, leaf_depth, histogram)
    return histogram


# Real hardware: sizes the simulator cannot run.


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["uniform", "gtin", "clustered"])
def test_gpu_build_and_lookups_match_the_cpu_twin(kind):
    rng = np.random.default_rng(11)
    keys = random_keys(rng, 200_000, kind)
    queries = np.concatenate([keys[:100_000], rng.integers(0, 2**64, 100_000, dtype=np.uint64)])
    cpu = radix_tree_build(keys, device="cpu")
    gpu = radix_tree_build(keys, device="cuda")
    assert gpu.strides == cpu.strides
    np.testing.assert_array_equal(gpu.table.copy_to_host(), cpu.table)
    np.testing.assert_array_equal(radix_tree_lookup(gpu, queries), radix_tree_lookup(cpu, queries))
    lengths = rng.integers(16, 65, keys.size)
    cpu = radix_tree_build(keys, lengths=lengths, device="cpu")
    gpu = radix_tree_build(keys, lengths=lengths, device="cuda")
    np.testing.assert_array_equal(gpu.table.copy_to_host(), cpu.table)
    np.testing.assert_array_equal(radix_tree_match(gpu, queries), radix_tree_match(cpu, queries))
