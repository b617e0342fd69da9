"""The full search's problem flattened for its kernel and copied to the current device."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from numba import cuda

from gpu_engine.layout import FullSearchLayout


@dataclass(frozen=True, eq=False)
class DeviceProblem:
    """The layout flattened for the kernel and copied to the current device."""

    n_lines: int
    n_merchants: int
    max_m: int
    use_int32: bool
    pair: bool
    r_in: int
    n_rows: int
    arrays: tuple
    # Version 2 carts (the layout's parcels): ``n_merchants`` counts columns, ``n_owners``
    # their merchants, and ``arrays`` are the parcel kernel's (:func:`device_parcel_problem`).
    parcels: bool = False
    n_owners: int = 0


def device_problem(
    layout: FullSearchLayout, *, max_m: int, use_int32: bool, pair: bool, r_in: int
) -> DeviceProblem:
    """Copy ``layout`` to the current device, money in int32 when ``use_int32`` (the caller
    has checked that it fits), else int64; ``r_in`` is the assignments per row."""
    dtype = np.int32 if use_int32 else np.int64
    offsets, cand, amount = layout.flat()
    # Three transfers instead of twelve: each allocation and copy costs tens of microseconds,
    # a visible share of a 5 ms search. The kernel gets views into the packed buffers.
    ints = (offsets, cand.astype(np.int32))
    money = (amount, layout.qty, *_fitted(layout, layout.params), layout.sub0, layout.units0)
    d_radix = cuda.to_device(layout.radix.astype(np.int64))
    d_ints = _views(cuda.to_device(np.concatenate(ints)), [a.size for a in ints])
    d_money = _views(
        cuda.to_device(np.concatenate([a.astype(dtype) for a in money])),
        [a.size for a in money],
    )
    return DeviceProblem(
        n_lines=layout.n_free,
        n_merchants=int(layout.merchants.size),
        max_m=max_m,
        use_int32=use_int32,
        pair=pair,
        r_in=r_in,
        n_rows=layout.complexity // r_in,
        arrays=(d_radix, *d_ints, *d_money),
    )


def device_parcel_problem(
    layout: FullSearchLayout, *, max_m: int, use_int32: bool, pair: bool, r_in: int
) -> DeviceProblem:
    """:func:`device_problem` for a version 2 layout: money and state in int32 when
    ``use_int32`` (checked by the caller), tiers always int64 (their bounds are not money)."""
    p = layout.parcels
    assert p is not None, "a version 2 layout has parcels"
    dtype = np.int32 if use_int32 else np.int64
    offsets, cand, amount = layout.flat()
    free, dmin, dbp = _fitted(layout, (*layout.params[:2], *p.terms))[2:]
    ints = (offsets, cand.astype(np.int32), p.owner.astype(np.int32))
    money = (amount, layout.qty, p.grams, *layout.params[:2], free, dmin, dbp)
    money += (layout.sub0, layout.units0, p.grams0)
    tier_up, tier_fee, tier_count, per_kg = p.tiers
    d_tiers = cuda.to_device(np.stack([tier_up, tier_fee]).astype(np.int64))
    d_ints = _views(cuda.to_device(np.concatenate(ints)), [a.size for a in ints])
    d_money = _views(
        cuda.to_device(np.concatenate([a.astype(dtype) for a in money])),
        [a.size for a in money],
    )
    d_counts = _views(
        cuda.to_device(np.concatenate([tier_count, per_kg]).astype(np.int64)),
        [tier_count.size, per_kg.size],
    )
    return DeviceProblem(
        n_lines=layout.n_free,
        n_merchants=int(layout.merchants.size),
        max_m=max_m,
        use_int32=use_int32,
        pair=pair,
        r_in=r_in,
        n_rows=layout.complexity // r_in,
        arrays=(
            cuda.to_device(layout.radix.astype(np.int64)),
            *d_ints,
            *d_money,
            d_tiers[0],
            d_tiers[1],
            *d_counts,
        ),
        parcels=True,
        n_owners=p.n_owners,
    )


def _fitted(layout: FullSearchLayout, params: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """``(base, extra, free_over, disc_min_units, disc_bp)`` with the two thresholds no cart
    of this layout reaches written as "never" (-1 free, 0 discount): the same prices, and
    values that fit the int32 state (an int32 cast of 2**32 + 100 would be 100)."""
    base, extra, free, dmin, dbp = params
    money = layout.max_money()
    units = int(layout.units0.sum()) + int(layout.qty.sum())
    return (
        base,
        extra,
        np.where(free > money, -1, free),
        np.where(dmin > units, 0, dmin),
        dbp,
    )


def _views(buffer, sizes: list[int]) -> list:
    cuts = [0, *(int(c) for c in np.cumsum(sizes))]
    return [buffer[a:b] for a, b in itertools.pairwise(cuts)]
