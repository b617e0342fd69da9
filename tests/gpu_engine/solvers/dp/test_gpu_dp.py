"""GPU subset DP: CUDA simulator at tiny sizes in CI, real hardware under the gpu marker."""

import numpy as np
import pytest
from hypothesis import given, settings
from numba import cuda

from gpu_engine import CartProblem, solve
from gpu_engine.pricing import merchant_cost
from gpu_engine.reference import reference_brute_force
from gpu_engine.solvers.dp.cuda import run_merchant_gpu
from gpu_engine.solvers.dp.solve import merchant_dp_inputs, run_merchant_cpu
from tests.gpu_engine.strategies import carts


@pytest.mark.cudasim
@settings(max_examples=15, deadline=None)
@given(carts(max_items=5, max_merchants=4))
def test_simulated_merchant_dp_equals_brute_force(cart):
    problem = CartProblem.from_dict(cart)
    best, _ = reference_brute_force(cart)
    total, _choice, _device = run_merchant_gpu(problem, merchant_dp_inputs(problem))
    assert total == best
    assert solve(problem, algorithm="gpu-dp").total == best


def _njit_in_kernel():
    @cuda.jit
    def kernel(args, out):
        i = cuda.grid(1)
        if i < out.shape[0]:
            out[i] = merchant_cost(
                args[i, 0], args[i, 1], args[i, 2], args[i, 3], args[i, 4], args[i, 5], args[i, 6]
            )

    rng = np.random.default_rng(0)
    args = np.column_stack(
        [
            rng.integers(0, 20000, 64),
            rng.integers(0, 6, 64),
            rng.integers(0, 900, 64),
            rng.integers(0, 300, 64),
            rng.choice([-1, 0, 5000], 64),
            rng.integers(0, 4, 64),
            rng.integers(0, 10001, 64),
        ]
    ).astype(np.int64)
    out = np.zeros(64, dtype=np.int64)
    kernel[2, 32](args, out)
    expected = [merchant_cost(*row) for row in args]
    assert out.tolist() == expected


@pytest.mark.cudasim
def test_njit_pricing_runs_inside_a_cuda_kernel_in_the_simulator():
    _njit_in_kernel()


@pytest.mark.gpu
def test_njit_pricing_compiles_as_a_device_function_on_the_gpu():
    _njit_in_kernel()


@pytest.mark.gpu
def test_real_gpu_merchant_dp_matches_cpu():
    from gpu_engine.bench.instances import uniform_cart

    for seed, shape in enumerate([(10, 4, 12), (14, 6, 30), (16, 10, 60)]):
        problem = CartProblem.from_dict(uniform_cart(*shape, seed=seed))
        inputs = merchant_dp_inputs(problem)
        cpu_total, _ = run_merchant_cpu(problem, inputs)
        gpu_total, _choice, _device = run_merchant_gpu(problem, inputs)
        assert gpu_total == cpu_total
        assert solve(problem, algorithm="gpu-dp").total == cpu_total


@pytest.mark.cudasim
@pytest.mark.parametrize("k", [0, 1, 4, 7, 11])
def test_prepared_tables_give_each_line_set_once_and_warps_one_merchant_part(k):
    from gpu_engine.solvers.dp.cuda import _get_kernels, deposit_order

    rng = np.random.default_rng(k)
    mask = np.array([0, (1 << k) - 1, *rng.integers(0, 1 << k, size=3)], dtype=np.int64)
    low_bits = k // 2
    low = cuda.device_array((mask.size, 1 << low_bits), dtype=np.int64)
    high = cuda.device_array((mask.size, 1 << (k - low_bits)), dtype=np.int64)
    h = cuda.device_array(1 << k, dtype=np.int64)
    prepare = _get_kernels()[1]
    prepare[2, 32](cuda.to_device(deposit_order(k, mask)), k, low_bits, low, high, h)
    low, high = low.copy_to_host(), high.copy_to_host()
    assert h.copy_to_host()[0] == 0
    assert (h.copy_to_host()[1:] > 2**61).all()
    index = np.arange(1 << k)
    for m, mask_m in enumerate(mask):
        sets = low[m, index & ((1 << low_bits) - 1)] | high[m, index >> low_bits]
        assert np.array_equal(np.sort(sets), index)
        # Consecutive thread indices vary the bits outside the mask first: a warp's 32
        # line sets share their part in the merchant's lines when there are 5 such bits.
        outside = k - bin(int(mask_m)).count("1")
        if low_bits >= 5 and outside >= 5:
            parts = (sets & mask_m).reshape(-1, 32)
            assert (parts == parts[:, :1]).all()


@pytest.mark.cudasim
@settings(max_examples=6, deadline=None)
@given(carts(max_items=5, max_merchants=12))
def test_simulated_dp_in_launches_of_a_few_layers_equals_one_launch(cart):
    """With a deadline the layers run ``LAYERS_PER_CHECK`` per launch: same answer as the
    single launch; a deadline already past stops after the first launch (None) unless that
    launch finished the DP."""
    import time

    from gpu_engine.solvers.dp.cuda import LAYERS_PER_CHECK

    problem = CartProblem.from_dict(cart)
    inputs = merchant_dp_inputs(problem)
    whole, _choice, _device = run_merchant_gpu(problem, inputs)
    chunked = run_merchant_gpu(problem, inputs, at=time.perf_counter() + 3600)
    assert chunked is not None and chunked[0] == whole
    late = run_merchant_gpu(problem, inputs, at=time.perf_counter() - 1)
    if inputs.merchants.size > LAYERS_PER_CHECK:
        assert late is None  # stopped after the first launch
    else:
        assert late is not None and late[0] == whole  # finished in one launch: kept


@pytest.mark.cudasim
def test_simulated_dp_past_its_deadline_stops_after_the_first_launch():
    import time

    from gpu_engine.solvers.dp.cuda import LAYERS_PER_CHECK

    merchants = [f"m{m}" for m in range(LAYERS_PER_CHECK + 2)]
    cart = {
        "items": [{"id": f"i{i}", "quantity": 1 + i} for i in range(3)],
        "merchants": [
            {"id": m, "shipping": {"base_fee": 300 + 7 * k, "per_extra_unit": 50}}
            for k, m in enumerate(merchants)
        ],
        "offers": [
            {"item": f"i{i}", "merchant": m, "price": 900 + 13 * i + 17 * k, "stock": None}
            for i in range(3)
            for k, m in enumerate(merchants)
        ],
    }
    problem = CartProblem.from_dict(cart)
    inputs = merchant_dp_inputs(problem)
    assert inputs.merchants.size > LAYERS_PER_CHECK
    assert run_merchant_gpu(problem, inputs, at=time.perf_counter() - 1) is None
    whole = run_merchant_gpu(problem, inputs)
    assert whole is not None and whole[0] == reference_brute_force(cart)[0]
