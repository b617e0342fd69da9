"""The engine's one min-with-index reduction (gpu_engine.cuda_ops): the shared-memory path in
the simulator (tiny blocks), the warp-shuffle path on a real GPU, both against a scan in index
order, with value ties and empty slots."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

# At module level: the simulator swaps the kernels' global `cuda`, not a closure's. Importing
# numba.cuda touches no device.
from numba import cuda

from gpu_engine.cuda_ops.order import lower_first, takes

pytestmark = pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaDeprecationWarning")

THREADS = 32


def _scan(values, indexes, group):
    """Per group of ``group`` consecutive slots: its (value, index) winner, scanned in order."""
    out = []
    for start in range(0, values.size, group):
        best_v, best_i = values[start], -1
        for v, i in zip(values[start : start + group], indexes[start : start + group], strict=True):
            if takes(best_v, best_i, v, i):
                best_v, best_i = v, i
        out.append((int(best_v), int(best_i)) if best_i >= 0 else (None, -1))
    return out


def _candidates(seed, blocks=2):
    rng = np.random.default_rng(seed)
    # Few distinct values: ties everywhere; some slots empty (index -1).
    values = rng.integers(0, 4, size=blocks * THREADS).astype(np.int64)
    indexes = rng.permutation(blocks * THREADS).astype(np.int64)
    indexes[rng.random(indexes.size) < 0.3] = -1
    return values, indexes


def _result(values, indexes):
    return [
        (int(v), int(i)) if i >= 0 else (None, -1) for v, i in zip(values, indexes, strict=True)
    ]


# The first example compiles the njit functions.
@pytest.mark.cudasim
@settings(deadline=None)
@given(st.integers(-3, 3), st.integers(-1, 5), st.integers(-3, 3), st.integers(-1, 5))
def test_the_order_is_value_then_index_and_empty_slots_lose(v, i, w, j):
    if j < 0:
        assert not takes(v, i, w, j)
    elif i < 0:
        assert takes(v, i, w, j)
    else:
        assert takes(v, i, w, j) == ((w, j) < (v, i))
    assert lower_first(v, i, w, j) == ((v, i) < (w, j))


@pytest.mark.cudasim
@pytest.mark.parametrize("group", [1, 2, 8, 32])
@pytest.mark.parametrize("seed", [0, 1])
def test_shared_memory_group_min_matches_a_scan(group, seed):
    from gpu_engine.cuda_ops.reduce import group_min_in, make_group_min_shared

    own_arrays = make_group_min_shared(THREADS)

    @cuda.jit
    def kernel(values, indexes, group, out_v, out_i, out_v2, out_i2):
        t = cuda.grid(1)
        red_v = cuda.shared.array(THREADS, np.int64)
        red_i = cuda.shared.array(THREADS, np.int64)
        v, i = group_min_in(values[t], indexes[t], group, red_v, red_i)
        out_v[t], out_i[t] = v, i
        v, i = own_arrays(values[t], indexes[t], group)
        out_v2[t], out_i2[t] = v, i

    values, indexes = _candidates(seed)
    outs = [np.empty_like(values) for _ in range(4)]
    kernel[values.size // THREADS, THREADS](values, indexes, group, *outs)
    expected = _scan(values, indexes, group)
    # Every thread of a group gets its group's winner, from both entry points.
    per_thread = [expected[t // group] for t in range(values.size)]
    assert _result(outs[0], outs[1]) == per_thread
    assert _result(outs[2], outs[3]) == per_thread


@pytest.mark.gpu
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_shuffle_paths_match_a_scan(seed):
    from gpu_engine.cuda_ops.reduce import block_min_shuffle, group_min_shuffle

    threads = 128

    @cuda.jit
    def kernel(values, indexes, group, out_v, out_i, block_v, block_i):
        t = cuda.grid(1)
        v, i = group_min_shuffle(values[t], indexes[t], group)
        out_v[t], out_i[t] = v, i
        warp_v = cuda.shared.array(32, np.int64)
        warp_i = cuda.shared.array(32, np.int64)
        v, i = block_min_shuffle(values[t], indexes[t], warp_v, warp_i)
        if cuda.threadIdx.x == 0:
            block_v[cuda.blockIdx.x], block_i[cuda.blockIdx.x] = v, i

    values, indexes = _candidates(seed, blocks=4 * threads // THREADS)
    blocks = values.size // threads
    for group in (2, 16, 32):
        out_v, out_i = np.empty_like(values), np.empty_like(values)
        block_v, block_i = np.empty(blocks, np.int64), np.empty(blocks, np.int64)
        kernel[blocks, threads](values, indexes, group, out_v, out_i, block_v, block_i)
        firsts = range(0, values.size, group)
        got = _result(out_v[list(firsts)], out_i[list(firsts)])
        assert got == _scan(values, indexes, group)
        assert _result(block_v, block_i) == _scan(values, indexes, threads)
