"""Cheapest offer per product: CPU twin and CUDA kernels (simulator in CI) against brute force."""

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_engine.catalog.cheapest_offer.select import (
    CheapestOffers,
    cheapest_offer_device,
    cheapest_offers,
    cheapest_offers_dense,
    cheapest_offers_warmup,
)

INT32_MIN, INT32_MAX = np.iinfo(np.int32).min, np.iinfo(np.int32).max
DEVICES = ["cpu", "cuda"]  # "cuda" is Numba's simulator here and the real GPU on the device


def reference_csr(offsets, merchant, price) -> CheapestOffers:
    """Brute force: sort each product's offers by (price, merchant, index)."""
    n = len(offsets) - 1
    out = CheapestOffers(np.full(n, -1, np.int32), np.full(n, -1, np.int32), np.full(n, -1))
    for p in range(n):
        lo, hi = offsets[p], offsets[p + 1]
        if lo == hi:
            continue
        index = np.arange(lo, hi)
        best = index[np.lexsort((index, merchant[lo:hi], price[lo:hi]))[0]]
        out.merchant[p], out.price[p], out.index[p] = merchant[best], price[best], best
    return out


def reference_dense(merchant, price) -> CheapestOffers:
    p, o = merchant.shape
    flat = reference_csr(np.arange(p + 1) * o, merchant.ravel(), price.ravel())
    return flat._replace(index=np.where(flat.index >= 0, flat.index - np.arange(p) * o, -1))


def assert_same(got: CheapestOffers, expected: CheapestOffers):
    for name in CheapestOffers._fields:
        np.testing.assert_array_equal(getattr(got, name), getattr(expected, name), err_msg=name)


def random_csr(rng, n_products, max_offers, *, price_range=(0, 50), merchant_range=(0, 8)):
    counts = rng.integers(0, max_offers + 1, n_products)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    n = int(offsets[-1])
    merchant = rng.integers(*merchant_range, n, dtype=np.int32)
    price = rng.integers(*price_range, n, dtype=np.int32)
    return offsets, merchant, price


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_csr_ragged_matches_brute_force(device, seed):
    rng = np.random.default_rng(seed)
    offsets, merchant, price = random_csr(rng, 9, 40)
    assert_same(
        cheapest_offers(offsets, merchant, price, device=device),
        reference_csr(offsets, merchant, price),
    )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(3, 8), (4, 12), (2, 7), (1, 1), (3, 260)])
def test_dense_matches_brute_force(device, shape):
    """Widths divisible by 4 take the vector kernel; others the CSR kernel on implicit rows."""
    rng = np.random.default_rng(sum(shape))
    merchant = rng.integers(0, 5, shape, dtype=np.int32)
    price = rng.integers(0, 4, shape, dtype=np.int32)
    assert_same(
        cheapest_offers_dense(merchant, price, device=device), reference_dense(merchant, price)
    )


@pytest.mark.parametrize("device", DEVICES)
def test_ties_go_to_lowest_merchant_then_lowest_index(device):
    offsets = np.array([0, 4, 8, 11])
    merchant = np.array([7, 3, 5, 3, 9, 9, 2, 9, -4, -4, 6], np.int32)
    price = np.array([5, 5, 5, 5, 1, 1, 1, 1, 8, 8, 8], np.int32)
    got = cheapest_offers(offsets, merchant, price, device=device)
    np.testing.assert_array_equal(got.merchant, [3, 2, -4])
    np.testing.assert_array_equal(got.price, [5, 1, 8])
    np.testing.assert_array_equal(got.index, [1, 6, 8])


@pytest.mark.parametrize("device", DEVICES)
def test_int32_extremes_rank_correctly(device):
    """The packed key must order the whole int32 range, sign bit included."""
    merchant = np.array([[INT32_MAX, INT32_MIN, 0, -1], [INT32_MAX, INT32_MAX, 1, 2]], np.int32)
    price = np.array([[INT32_MIN, INT32_MIN, -1, INT32_MAX], [INT32_MAX, INT32_MAX, INT32_MAX,
                     INT32_MAX]], np.int32)  # fmt: skip
    got = cheapest_offers_dense(merchant, price, device=device)
    np.testing.assert_array_equal(got.merchant, [INT32_MIN, 1])
    np.testing.assert_array_equal(got.price, [INT32_MIN, INT32_MAX])
    np.testing.assert_array_equal(got.index, [1, 2])


@pytest.mark.parametrize("device", DEVICES)
def test_the_all_max_offer_is_not_mistaken_for_no_offer(device):
    offsets = np.array([0, 1])
    got = cheapest_offers(
        offsets, np.array([INT32_MAX], np.int32), np.array([INT32_MAX], np.int32), device=device
    )
    assert (got.merchant[0], got.price[0], got.index[0]) == (INT32_MAX, INT32_MAX, 0)


@pytest.mark.parametrize("device", DEVICES)
def test_empty_products_and_empty_catalog(device):
    got = cheapest_offers(np.array([0, 0, 2, 2]), [4, 3], [10, 10], device=device)
    np.testing.assert_array_equal(got.merchant, [-1, 3, -1])
    np.testing.assert_array_equal(got.index, [-1, 1, -1])
    none = cheapest_offers(np.array([0]), [], [], device=device)
    assert none.merchant.shape == none.price.shape == none.index.shape == (0,)
    dense = cheapest_offers_dense(np.zeros((0, 4), np.int32), np.zeros((0, 4)), device=device)
    assert dense.index.shape == (0,)
    no_columns = cheapest_offers_dense(np.zeros((2, 0), np.int32), np.zeros((2, 0)), device=device)
    np.testing.assert_array_equal(no_columns.index, [-1, -1])


@pytest.mark.parametrize("device", DEVICES)
def test_single_offer(device):
    got = cheapest_offers([0, 1], [42], [1999], device=device)
    assert (got.merchant[0], got.price[0], got.index[0]) == (42, 1999, 0)


@pytest.mark.cudasim
@pytest.mark.parametrize("unroll", [4, 8])
def test_row_kernels_in_the_simulator(unroll):
    """The 16-byte vector kernel and the dense-rows kernel, shared-memory reduction."""
    from numba import cuda

    from gpu_engine.catalog.cheapest_offer import cuda as kernels

    rng = np.random.default_rng(unroll)
    merchant = rng.integers(0, 4, (3, 72), dtype=np.int32)
    price = rng.integers(0, 3, (3, 72), dtype=np.int32)
    flat = cuda.to_device(merchant.ravel()), cuda.to_device(price.ravel())
    expected = reference_dense(merchant, price)
    for launch in (
        lambda out: kernels.launch_dense(*flat, out, reduction="shared", threads_per_block=64),
        lambda out: kernels.launch_csr(
            cuda.device_array(1, np.int64),
            *flat,
            out,
            reduction="shared",
            threads_per_block=32,
            group=8,
            column_index=True,
            width=72,
            unroll=unroll,
        ),
    ):
        out = tuple(cuda.device_array(3, t) for t in (np.int32, np.int32, np.int64))
        launch(out)
        assert_same(CheapestOffers(*(a.copy_to_host() for a in out)), expected)


@given(
    counts=st.lists(st.integers(0, 12), min_size=0, max_size=12),
    seed=st.integers(0, 2**32 - 1),
)
@settings(max_examples=60, deadline=None)
def test_cpu_twin_matches_brute_force_on_any_csr(counts, seed):
    rng = np.random.default_rng(seed)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    n = int(offsets[-1])
    merchant = rng.integers(-3, 3, n, dtype=np.int32)
    price = rng.integers(-2, 3, n, dtype=np.int32)
    assert_same(
        cheapest_offers(offsets, merchant, price, device="cpu"),
        reference_csr(offsets, merchant, price),
    )


@pytest.mark.cudasim
@given(counts=st.lists(st.integers(0, 9), min_size=1, max_size=5), seed=st.integers(0, 999))
@settings(max_examples=8, deadline=None)
def test_kernel_matches_cpu_twin_on_any_csr(counts, seed):
    rng = np.random.default_rng(seed)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    n = int(offsets[-1])
    merchant = rng.integers(0, 3, n, dtype=np.int32)
    price = rng.integers(0, 3, n, dtype=np.int32)
    assert_same(
        cheapest_offers(offsets, merchant, price, device="cuda"),
        cheapest_offers(offsets, merchant, price, device="cpu"),
    )


@pytest.mark.parametrize(
    ("offsets", "merchant", "price", "message"),
    [
        ([1, 2], [1], [1], "offsets\\[0\\] must be 0"),
        ([0, 2, 1], [1, 2], [1, 2], "non-decreasing"),
        ([0, 3], [1, 2], [1, 2], "offsets\\[-1\\]"),
        ([0, 2], [1, 2], [1], "differ in shape"),
        ([0, 1], [2**40], [1], "outside int32"),
    ],
)
def test_bad_input_is_refused(offsets, merchant, price, message):
    with pytest.raises(ValueError, match=message):
        cheapest_offers(offsets, merchant, price, device="cpu")


def test_float_prices_are_refused():
    with pytest.raises(TypeError, match="integers"):
        cheapest_offers([0, 1], [1], [9.99], device="cpu")


def test_auto_never_picks_the_simulator():
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        assert cheapest_offer_device("auto") == "cpu"
    with pytest.raises(ValueError, match="device"):
        cheapest_offer_device("tpu")


def test_warmup_runs_both_layouts():
    assert cheapest_offers_warmup(device="cpu") == "cpu"


# Real hardware: the warp-shuffle reduction, 16-byte vector loads and sizes the simulator
# cannot run. Run on the device with SMARTCART_REAL_GPU=1.


@pytest.mark.gpu
@pytest.mark.parametrize("flavour", ["nc", "plain", "cs"])
@pytest.mark.parametrize("reduction", ["shuffle", "shared"])
@pytest.mark.parametrize("n_offers", [1024, 4, 12, 1028, 4096])
def test_gpu_dense_vector_kernel_matches_cpu(flavour, reduction, n_offers):
    from numba import cuda

    from gpu_engine.catalog.cheapest_offer import cuda as kernels

    rng = np.random.default_rng(n_offers)
    shape = (3001, n_offers)
    merchant = rng.integers(0, 50, shape, dtype=np.int32)
    price = rng.integers(0, 30, shape, dtype=np.int32)
    out = tuple(cuda.device_array(shape[0], t) for t in (np.int32, np.int32, np.int64))
    kernels.launch_dense(
        cuda.to_device(merchant.ravel()), cuda.to_device(price.ravel()), out,
        reduction=reduction, threads_per_block=256, flavour=flavour, blocks=97,
    )  # fmt: skip
    got = CheapestOffers(*(a.copy_to_host() for a in out))
    assert_same(got, cheapest_offers_dense(merchant, price, device="cpu"))


@pytest.mark.gpu
@pytest.mark.parametrize("unroll", [4, 8])
@pytest.mark.parametrize("reduction", ["shuffle", "shared"])
@pytest.mark.parametrize("group", [1, 2, 4, 8, 16, 32])
def test_gpu_csr_kernel_matches_cpu_for_every_group(unroll, reduction, group):
    from numba import cuda

    from gpu_engine.catalog.cheapest_offer import cuda as kernels

    rng = np.random.default_rng(group)
    offsets, merchant, price = random_csr(rng, 5000, 300, price_range=(0, 20))
    out = tuple(cuda.device_array(5000, t) for t in (np.int32, np.int32, np.int64))
    kernels.launch_csr(
        cuda.to_device(offsets.astype(np.int64)), cuda.to_device(merchant),
        cuda.to_device(price), out, reduction=reduction, threads_per_block=128, group=group,
        unroll=unroll,
    )  # fmt: skip
    got = CheapestOffers(*(a.copy_to_host() for a in out))
    assert_same(got, cheapest_offers(offsets, merchant, price, device="cpu"))


@pytest.mark.gpu
@pytest.mark.parametrize("unroll", [4, 8])
@pytest.mark.parametrize("width", [1024, 37, 3])
def test_gpu_dense_rows_kernel_matches_cpu(unroll, width):
    from numba import cuda

    from gpu_engine.catalog.cheapest_offer import cuda as kernels

    rng = np.random.default_rng(width)
    merchant = rng.integers(0, 40, (2001, width), dtype=np.int32)
    price = rng.integers(0, 25, (2001, width), dtype=np.int32)
    out = tuple(cuda.device_array(2001, t) for t in (np.int32, np.int32, np.int64))
    kernels.launch_csr(
        cuda.device_array(1, np.int64), cuda.to_device(merchant.ravel()),
        cuda.to_device(price.ravel()), out, reduction="shuffle", threads_per_block=256,
        group=32, column_index=True, width=width, unroll=unroll,
    )  # fmt: skip
    got = CheapestOffers(*(a.copy_to_host() for a in out))
    assert_same(got, cheapest_offers_dense(merchant, price, device="cpu"))


@pytest.mark.gpu
def test_gpu_auto_uses_the_gpu_and_keeps_device_arrays_there():
    from numba import cuda

    assert cheapest_offer_device("auto") == "cuda"
    rng = np.random.default_rng(5)
    merchant = rng.integers(0, 9, (777, 1024), dtype=np.int32)
    price = rng.integers(0, 9, (777, 1024), dtype=np.int32)
    got = cheapest_offers_dense(cuda.to_device(merchant), cuda.to_device(price))
    assert cuda.is_cuda_array(got.merchant)
    host = CheapestOffers(*(a.copy_to_host() for a in got))
    assert_same(host, reference_dense(merchant, price))


@pytest.mark.gpu
def test_gpu_unaligned_dense_rows_fall_back_to_the_csr_kernel():
    from numba import cuda

    rng = np.random.default_rng(6)
    merchant = rng.integers(0, 9, (65, 33), dtype=np.int32)
    price = rng.integers(0, 9, (65, 33), dtype=np.int32)
    whole = cuda.to_device(np.concatenate([[0], merchant.ravel()]).astype(np.int32))
    prices = cuda.to_device(np.concatenate([[0], price.ravel()]).astype(np.int32))
    got = cheapest_offers_dense(whole[1:].reshape(65, 33), prices[1:].reshape(65, 33))
    host = CheapestOffers(*(a.copy_to_host() for a in got))
    assert_same(host, reference_dense(merchant, price))
