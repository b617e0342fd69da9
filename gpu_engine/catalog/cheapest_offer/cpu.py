"""CPU (numba) twin of the cheapest-offer kernels, and the offer key both share.

An offer is ranked by one signed 64-bit key: the price in the high 32 bits and the merchant
id, shifted to unsigned, in the low 32 bits. One ``min`` over keys therefore yields the
cheapest price and, among equal prices, the lowest merchant id, for every int32 value (negative
ones included). Equal keys (the same merchant listing one product twice at one price) are
resolved to the lowest offer index, which the scans below get for free by keeping the first
strictly smaller key in index order.
"""

import numba
import numpy as np

# Moves the signed merchant id into [0, 2**32) so that it sorts correctly below the price.
_MERCHANT_BIAS = np.int64(2**31)
_LOW32 = np.int64(0xFFFFFFFF)


@numba.njit(cache=True)
def offer_key(price, merchant):
    """Rank key of one offer: smaller is better (cheaper, then lower merchant id)."""
    return (np.int64(price) << np.int64(32)) + np.int64(merchant) + _MERCHANT_BIAS


@numba.njit(cache=True)
def offer_key_price(key):
    """The price packed into ``key`` (arithmetic shift keeps the sign)."""
    return np.int32(key >> np.int64(32))


@numba.njit(cache=True)
def offer_key_merchant(key):
    """The merchant id packed into ``key``."""
    return np.int32((key & _LOW32) - _MERCHANT_BIAS)


@numba.njit(cache=True)
def _write_best(slot, key, index, best_merchant, best_price, best_index):
    if index < 0:
        best_merchant[slot] = -1
        best_price[slot] = -1
        best_index[slot] = -1
    else:
        best_merchant[slot] = offer_key_merchant(key)
        best_price[slot] = offer_key_price(key)
        best_index[slot] = index


@numba.njit(cache=True)
def cheapest_offers_csr_cpu(offsets, merchant, price, best_merchant, best_price, best_index):
    """Cheapest offer of each CSR row; ``best_index`` is the offer's position in the flat arrays."""
    for product in range(offsets.size - 1):
        best_key = np.int64(0)
        best = -1
        for i in range(offsets[product], offsets[product + 1]):
            key = offer_key(price[i], merchant[i])
            if best < 0 or key < best_key:
                best_key = key
                best = i
        _write_best(product, best_key, best, best_merchant, best_price, best_index)


@numba.njit(cache=True)
def cheapest_offers_dense_cpu(merchant, price, best_merchant, best_price, best_index):
    """Cheapest offer of each row of (P, O) arrays; ``best_index`` is the column."""
    for product in range(merchant.shape[0]):
        best_key = np.int64(0)
        best = -1
        for column in range(merchant.shape[1]):
            key = offer_key(price[product, column], merchant[product, column])
            if best < 0 or key < best_key:
                best_key = key
                best = column
        _write_best(product, best_key, best, best_merchant, best_price, best_index)
