"""The GPU batch's default variant follows the measured crossover (BENCHMARKS.md)."""

from gpu_engine.batch import gpu as batch_gpu


def test_small_batches_take_split_warp_and_large_ones_overlap():
    assert batch_gpu.default_variant(100_000) == "split-warp"
    assert batch_gpu.default_variant(batch_gpu.OVERLAP_MIN_CARTS) == "overlap"
    assert batch_gpu.default_variant(1_000_000) == "overlap"
    assert {batch_gpu.default_variant(n) for n in (1, 10**7)} <= set(batch_gpu.VARIANTS)
