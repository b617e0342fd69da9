"""The CPU twin of the version 2 batch: one cart per ``prange`` iteration, each searched by
:func:`gpu_engine.batch.v2_ops.full_search_v2` in one sequential walk."""

from __future__ import annotations

import numba
import numpy as np

from gpu_engine.batch import v2_ops
from gpu_engine.batch.ops import FULL, MAX_FULL_LINES

_full_search = numba.njit(cache=True)(v2_ops.full_search_v2)
_decode = numba.njit(cache=True)(v2_ops.decode_v2)


@numba.njit(cache=True, parallel=True)
def solve_v2_range(
    method, complexity, line_ptr, line_qty, line_grams, offer_ptr, offer_col, offer_amount,
    col_ptr, col_owner, base, extra, tier_up, tier_fee, tier_count, per_kg,
    owner_ptr, free_over, dmin, dbp, out_total, out_choice,
):  # fmt: skip
    """Solve the carts planned FULL into ``out_total[c]`` and ``out_choice[line]`` (the
    cart-local column); the others keep what the caller wrote there."""
    for c in numba.prange(method.size):
        if method[c] != FULL:
            continue
        l0 = line_ptr[c]
        n = line_ptr[c + 1] - l0
        choice = np.empty(MAX_FULL_LINES, dtype=np.int64)
        total, index = _full_search(
            0, 1, l0, n, complexity[c], offer_ptr, offer_col, offer_amount, line_qty,
            line_grams, col_ptr[c], col_owner, base, extra, tier_up, tier_fee, tier_count,
            per_kg, owner_ptr[c], free_over, dmin, dbp, choice,
        )  # fmt: skip
        _decode(index, l0, n, offer_ptr, offer_col, out_choice)
        out_total[c] = total
