"""The CPU twin of the version 2 batch: one cart per ``prange`` iteration, each walking its
whole range with :func:`gpu_engine.batch.v2_ops.search_v2`."""

from __future__ import annotations

import numba
import numpy as np

from gpu_engine.batch import v2_ops
from gpu_engine.batch.ops import FULL

_search = numba.njit(cache=True)(v2_ops.search_v2)
_decode = numba.njit(cache=True)(v2_ops.decode_v2)


@numba.njit(cache=True, parallel=True)
def solve_v2_range(
    method, complexity, line_ptr, line_qty, line_grams, line_radix, offer_ptr, offer_col,
    offer_amount, col_ptr, col_owner, base, extra, tier_up, tier_fee, tier_count, per_kg,
    owner_ptr, free_over, dmin, dbp, out_total, out_choice,
):  # fmt: skip
    """Solve the carts planned FULL into ``out_total[c]`` and ``out_choice[line]`` (the
    cart-local column); the others keep what the caller wrote there."""
    for c in numba.prange(method.size):
        if method[c] != FULL:
            continue
        l0, l1 = line_ptr[c], line_ptr[c + 1]
        k0, k1 = col_ptr[c], col_ptr[c + 1]
        q0, q1 = owner_ptr[c], owner_ptr[c + 1]
        n_c = k1 - k0
        n_o = q1 - q0
        total, index = _search(
            0, complexity[c], l1 - l0, line_radix[l0:l1], offer_ptr[l0:l1], offer_col,
            offer_amount, line_qty[l0:l1], line_grams[l0:l1], n_c, n_o, col_owner[k0:k1],
            np.zeros(n_c, dtype=np.int64), np.zeros(l1 - l0, dtype=np.int64),
            np.empty(n_c, dtype=np.int64), np.empty(n_c, dtype=np.int64),
            np.empty(n_c, dtype=np.int64), np.empty(n_o, dtype=np.int64),
            np.empty(n_o, dtype=np.int64), np.empty(n_o, dtype=np.int64),
            np.empty(n_o, dtype=np.int64), base[k0:k1], extra[k0:k1], tier_up[k0:k1],
            tier_fee[k0:k1], tier_count[k0:k1], per_kg[k0:k1], free_over[q0:q1], dmin[q0:q1],
            dbp[q0:q1],
        )  # fmt: skip
        _decode(index, l0, l1 - l0, offer_ptr, offer_col, out_choice)
        out_total[c] = total
