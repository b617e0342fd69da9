"""The batch's exact full search on version 2 carts, written once for both devices.

Plain Python compiled twice, as :mod:`gpu_engine.batch.ops` is: ``numba.njit`` in
:mod:`gpu_engine.batch.v2_cpu` (one cart per ``prange`` iteration, its whole range) and
``cuda.jit(device=True)`` in :mod:`gpu_engine.batch.v2_cuda` (one block per cart, thread ``t``
of ``T`` a contiguous ``T``-th of its range). The walk is the full search's own
(:mod:`gpu_engine.solvers.full.parcel_ops`: a row is one choice of every line but the last,
whose choices are priced one parcel and one merchant each; the next row is an odometer step),
so prices come only from :func:`gpu_engine.pricing.parcel_fee` and
:func:`gpu_engine.pricing.owner_cost`. The numbering is version 1's mixed radix (last line
fastest, digit = offer rank within the line); ties keep the lowest index.

A cart is a slice of :class:`gpu_engine.batch.v2_pack.PackedV2`: its lines' ``off`` (global
offer offsets), ``radix`` (offers a line), ``qty``, ``lgrams``; ``cand``/``amount`` are the
batch's offer arrays (``cand`` = cart-local column); the column arrays and the merchant terms
are the cart's slices. ``zero`` is at least ``n_c`` zeros (nothing is folded before the walk).
"""

from __future__ import annotations

import numba

from gpu_engine.solvers.full import ops as full_ops
from gpu_engine.solvers.full.parcel_ops import next_row, row_single, row_state

# The full search's digit decoding, an njit dispatcher like parcel_ops' walkers (the CUDA twin
# rebinds it to its cuda.jit form).
decode_row = numba.njit(cache=True)(full_ops.decode_row)

NO_BEST = 2**63 - 1


def search_v2(
    start, stop, n, radix, off, cand, amount, qty, lgrams, n_c, n_o, owner, zero,
    digits, units, grams, fee, osub, ounits, oparcels, ocost,
    base, extra, tier_up, tier_fee, tier_count, per_kg, free, dmin, dbp,
):  # fmt: skip
    """Cheapest (total, index) over assignment indexes ``[start, stop)`` of an ``n``-line
    cart; ``(NO_BEST, -1)`` for an empty range. ``digits`` (``n`` entries), ``units``,
    ``grams``, ``fee`` (``n_c``) and ``osub``, ``ounits``, ``oparcels``, ``ocost`` (``n_o``)
    are the walk's scratch."""
    best_t = NO_BEST
    best_i = -1
    if start >= stop:
        return best_t, best_i
    prefix = n - 1
    r_b = radix[prefix]
    row = start // r_b
    decode_row(row, prefix, radix, digits)
    total = row_state(
        prefix, digits, off, cand, amount, qty, lgrams, n_c, n_o, owner, zero, zero, zero,
        units, grams, fee, osub, ounits, oparcels, ocost,
        base, extra, tier_up, tier_fee, tier_count, per_kg, free, dmin, dbp,
    )  # fmt: skip
    j_lo = start - row * r_b
    while True:
        j_hi = min(r_b, stop - row * r_b)
        best_t, best_i = row_single(
            row, total, prefix, j_lo, j_hi, r_b, off, cand, amount, qty, lgrams, owner,
            units, grams, fee, osub, ounits, oparcels, ocost,
            base, extra, tier_up, tier_fee, tier_count, per_kg, free, dmin, dbp, best_t, best_i,
        )  # fmt: skip
        row += 1
        if row * r_b >= stop:
            break
        j_lo = 0
        total += next_row(
            prefix, digits, radix, off, cand, amount, qty, lgrams, owner,
            units, grams, fee, osub, ounits, oparcels, ocost,
            base, extra, tier_up, tier_fee, tier_count, per_kg, free, dmin, dbp,
        )  # fmt: skip
    return best_t, best_i


def decode_v2(index, l0, n, offer_ptr, offer_col, out_choice):
    """Write the cart-local column of every line of assignment ``index`` to ``out_choice``."""
    rest = index
    for i in range(n - 1, -1, -1):
        line = l0 + i
        radix = offer_ptr[line + 1] - offer_ptr[line]
        out_choice[line] = offer_col[offer_ptr[line] + rest % radix]
        rest //= radix
