"""The GPU batch's default variant follows the measured crossover (BENCHMARKS.md, issue 14)."""

from gpu_engine.batch import cuda as batch_cuda


def test_small_batches_take_split_warp_and_large_ones_overlap():
    assert batch_cuda.default_variant(100_000) == "split-warp"
    assert batch_cuda.default_variant(batch_cuda.OVERLAP_MIN_CARTS) == "overlap"
    assert batch_cuda.default_variant(1_000_000) == "overlap"
    assert {batch_cuda.default_variant(n) for n in (1, 10**7)} <= set(batch_cuda.VARIANTS)
