"""Cheapest offer per product on the GPU or the CPU (the "Cuda-Marketplace" workload).

Every product has offers, each an (int32 merchant id, int32 price in cents). The cheapest offer
of a product is the one with the lowest price; among equal prices the lowest merchant id wins,
and among identical (price, merchant) pairs the lowest offer index. Products without offers get
-1 in all three outputs (``index`` is the reliable marker, since -1 may be a valid price).

Public API::

    cheapest_offers(offsets, merchant, price, *, device="auto") -> CheapestOffers
        CSR layout: the offers of product p are merchant[offsets[p]:offsets[p + 1]] (and price).
        offsets: P + 1 non-decreasing integers, offsets[0] == 0, offsets[-1] == len(merchant).
        CheapestOffers.index is the offer's position in the flat merchant/price arrays.

    cheapest_offers_dense(merchant, price, *, device="auto") -> CheapestOffers
        Dense layout: (P, O) arrays, every product has exactly O offers. On the GPU the rows
        are scanned by the kernel variant that measured fastest on the device (see
        ``DENSE_KERNEL`` below and BENCHMARKS.md); the 16-byte vector kernel needs
        O % 4 == 0 and 16-byte aligned rows. CheapestOffers.index is the column (0 .. O - 1).

    CheapestOffers(merchant, price, index)   named tuple: int32[P], int32[P], int64[P]
    cheapest_offer_device(device="auto") -> "cuda" | "cpu"
    cheapest_offers_warmup(*, device="auto") -> str   compile the kernels for that device

``device``: "auto" picks the GPU when a real one is present (never the CUDA simulator), else the
CPU twin (:mod:`gpu_engine.catalog.cheapest_offer.cpu`); "cuda" and "cpu" force one. Inputs may be
NumPy arrays or CUDA device arrays; with device arrays the work stays on the GPU, results are device
arrays and the offsets are trusted as given (checking them would cost a copy to the host).
"""

from typing import Any, NamedTuple

import numba
import numpy as np

from gpu_engine.device import resolve_device

_INT32 = np.iinfo(np.int32)
# Dense GPU path, chosen by measurement on the lent H200 (BENCHMARKS.md): "rows" is the
# coalesced 4-byte row scan (group of lanes per product, DENSE_UNROLL loads of each array in
# flight), "vector" the warp-per-product 16-byte load kernel with cache operator DENSE_FLAVOUR.
DENSE_KERNEL = "vector"
DENSE_UNROLL = 8
DENSE_FLAVOUR = "plain"
DENSE_THREADS_PER_BLOCK = 128
_THREADS_PER_BLOCK = 256
# The simulator runs one Python thread per CUDA thread: keep its blocks small.
_SIM_THREADS_PER_BLOCK = 32


class CheapestOffers(NamedTuple):
    """Per product: NumPy arrays from host inputs, numba device arrays (untyped) from device
    inputs."""

    merchant: Any
    price: Any
    index: Any


def cheapest_offer_device(device: str = "auto") -> str:
    """Resolve ``device`` to "cuda" or "cpu"; "auto" never selects the simulator
    (:func:`gpu_engine.device.resolve_device`)."""
    return resolve_device(device)


def cheapest_offers(offsets, merchant, price, *, device: str = "auto") -> CheapestOffers:
    """Cheapest offer of every product of a CSR offer table (see the module docstring)."""
    if _is_device_array(merchant):
        return _csr_on_device(offsets, merchant, price, device)
    offsets = _host_offsets(offsets)
    merchant = _host_int32("merchant", merchant, ndim=1)
    price = _host_int32("price", price, ndim=1)
    if merchant.shape != price.shape:
        raise ValueError(f"merchant and price differ in shape: {merchant.shape} != {price.shape}")
    if offsets[-1] != merchant.shape[0]:
        raise ValueError(f"offsets[-1] is {offsets[-1]}, expected len(merchant) = {merchant.size}")
    n_products = offsets.size - 1
    if cheapest_offer_device(device) == "cpu":
        from gpu_engine.catalog.cheapest_offer.cpu import cheapest_offers_csr_cpu

        out = _host_outputs(n_products)
        cheapest_offers_csr_cpu(offsets, merchant, price, *out)
        return out
    from numba import cuda

    result = _csr_on_device(
        cuda.to_device(offsets), cuda.to_device(merchant), cuda.to_device(price), "cuda"
    )
    return CheapestOffers(*(a.copy_to_host() for a in result))


def cheapest_offers_dense(merchant, price, *, device: str = "auto") -> CheapestOffers:
    """Cheapest offer of every row of dense (P, O) merchant/price arrays."""
    if _is_device_array(merchant):
        return _dense_on_device(merchant, price, device)
    merchant = _host_int32("merchant", merchant, ndim=2)
    price = _host_int32("price", price, ndim=2)
    if merchant.shape != price.shape:
        raise ValueError(f"merchant and price differ in shape: {merchant.shape} != {price.shape}")
    if cheapest_offer_device(device) == "cpu":
        from gpu_engine.catalog.cheapest_offer.cpu import cheapest_offers_dense_cpu

        out = _host_outputs(merchant.shape[0])
        cheapest_offers_dense_cpu(merchant, price, *out)
        return out
    from numba import cuda

    result = _dense_on_device(cuda.to_device(merchant), cuda.to_device(price), "cuda")
    return CheapestOffers(*(a.copy_to_host() for a in result))


def cheapest_offers_warmup(*, device: str = "auto") -> str:
    """Compile the kernels (or njit twins) for ``device`` on tiny inputs; returns the device.

    Call it when a worker starts, so that no request pays Numba's compile time.
    """
    resolved = cheapest_offer_device(device)
    rng = np.random.default_rng(0)
    merchant = rng.integers(0, 9, size=(3, 8), dtype=np.int32)
    price = rng.integers(0, 9, size=(3, 8), dtype=np.int32)
    cheapest_offers_dense(merchant, price, device=resolved)
    offsets = np.array([0, 3, 3, 24], dtype=np.int64)
    cheapest_offers(offsets, merchant.ravel(), price.ravel(), device=resolved)
    return resolved


def _threads_per_block() -> int:
    return _SIM_THREADS_PER_BLOCK if numba.config.ENABLE_CUDASIM else _THREADS_PER_BLOCK


def _reduction() -> str:
    return "shared" if numba.config.ENABLE_CUDASIM else "shuffle"


def _csr_on_device(offsets, merchant, price, device) -> CheapestOffers:
    from numba import cuda

    from gpu_engine.catalog.cheapest_offer import cuda as kernels

    if cheapest_offer_device(device) != "cuda":
        raise ValueError("device arrays need device='cuda' (or 'auto' with a GPU present)")
    merchant = _as_device("merchant", merchant, np.int32, ndim=1)
    price = _as_device("price", price, np.int32, ndim=1)
    if merchant.shape != price.shape:
        raise ValueError(f"merchant and price differ in shape: {merchant.shape} != {price.shape}")
    if not _is_device_array(offsets):
        offsets = cuda.to_device(_host_offsets(offsets))
    offsets = _as_device("offsets", offsets, np.int64, ndim=1)
    n_products = offsets.shape[0] - 1
    out = _device_outputs(n_products)
    if n_products:
        kernels.launch_csr(
            offsets, merchant, price, out,
            reduction=_reduction(),
            threads_per_block=_threads_per_block(),
            group=kernels.csr_group_for(n_products, merchant.shape[0]),
        )  # fmt: skip
    return out


def _dense_on_device(merchant, price, device) -> CheapestOffers:
    from numba import cuda

    from gpu_engine.catalog.cheapest_offer import cuda as kernels

    if cheapest_offer_device(device) != "cuda":
        raise ValueError("device arrays need device='cuda' (or 'auto' with a GPU present)")
    merchant = _as_device("merchant", merchant, np.int32, ndim=2)
    price = _as_device("price", price, np.int32, ndim=2)
    if merchant.shape != price.shape:
        raise ValueError(f"merchant and price differ in shape: {merchant.shape} != {price.shape}")
    n_products, n_offers = merchant.shape
    out = _device_outputs(n_products)
    if n_products == 0:
        return out
    flat_merchant = merchant.reshape(merchant.size)
    flat_price = price.reshape(price.size)
    vector_ok = n_offers % 4 == 0 and _aligned16(merchant) and _aligned16(price)
    if DENSE_KERNEL == "vector" and vector_ok:
        threads = _SIM_THREADS_PER_BLOCK if numba.config.ENABLE_CUDASIM else DENSE_THREADS_PER_BLOCK
        kernels.launch_dense(
            flat_merchant, flat_price, out, reduction=_reduction(),
            threads_per_block=threads, flavour=DENSE_FLAVOUR,
        )  # fmt: skip
        return out
    # Rows of ``width`` offers need no offsets; zero-width rows go through real (zero) offsets.
    offsets = cuda.to_device(np.zeros(n_products + 1 if n_offers == 0 else 1, np.int64))
    kernels.launch_csr(
        offsets, flat_merchant, flat_price, out,
        reduction=_reduction(), threads_per_block=_threads_per_block(),
        group=kernels.csr_group_for(n_products, merchant.size), column_index=True,
        width=n_offers, unroll=DENSE_UNROLL,
    )  # fmt: skip
    return out


def _is_device_array(array) -> bool:
    if isinstance(array, np.ndarray):
        return False
    from numba import cuda

    if numba.config.ENABLE_CUDASIM:
        return cuda.devicearray.is_cuda_ndarray(array)
    return cuda.is_cuda_array(array)


def _as_device(name, array, dtype, *, ndim):
    """Numba view of a device array (any ``__cuda_array_interface__`` exporter), checked."""
    from numba import cuda

    if not _is_device_array(array):
        raise TypeError(f"{name} must be a CUDA device array like the others")
    if not numba.config.ENABLE_CUDASIM:
        array = cuda.as_cuda_array(array)
    if array.dtype != dtype or array.ndim != ndim:
        raise TypeError(f"{name} must be {np.dtype(dtype).name} with {ndim} dimension(s)")
    if not array.is_c_contiguous():
        raise ValueError(f"{name} must be C-contiguous")
    return array


def _aligned16(array) -> bool:
    if numba.config.ENABLE_CUDASIM:
        return True
    return array.__cuda_array_interface__["data"][0] % 16 == 0


def _host_int32(name, values, *, ndim) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {array.shape}")
    if array.size == 0:
        return np.ascontiguousarray(array, dtype=np.int32)
    if not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"{name} must hold integers (cents, ids), got {array.dtype}")
    if array.dtype.itemsize > 4 or array.dtype == np.uint32:
        low, high = int(array.min()), int(array.max())
        if low < _INT32.min or high > _INT32.max:
            raise ValueError(f"{name} holds {low}..{high}, outside int32")
    return np.ascontiguousarray(array, dtype=np.int32)


def _host_offsets(offsets) -> np.ndarray:
    array = np.asarray(offsets)
    if array.ndim != 1 or array.size == 0:
        raise ValueError("offsets must be 1-D with P + 1 >= 1 entries")
    if not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"offsets must hold integers, got {array.dtype}")
    array = np.ascontiguousarray(array, dtype=np.int64)
    if array[0] != 0:
        raise ValueError(f"offsets[0] must be 0, got {array[0]}")
    if np.any(np.diff(array) < 0):
        raise ValueError("offsets must be non-decreasing")
    return array


def _host_outputs(n_products) -> CheapestOffers:
    return CheapestOffers(
        np.empty(n_products, np.int32),
        np.empty(n_products, np.int32),
        np.empty(n_products, np.int64),
    )


def _device_outputs(n_products) -> CheapestOffers:
    from numba import cuda

    return CheapestOffers(
        cuda.device_array(n_products, np.int32),
        cuda.device_array(n_products, np.int32),
        cuda.device_array(n_products, np.int64),
    )
