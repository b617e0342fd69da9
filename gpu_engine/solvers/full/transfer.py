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
    money = (amount, layout.qty, *layout.params, layout.sub0, layout.units0)
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


def _views(buffer, sizes: list[int]) -> list:
    cuts = [0, *(int(c) for c in np.cumsum(sizes))]
    return [buffer[a:b] for a, b in itertools.pairwise(cuts)]
