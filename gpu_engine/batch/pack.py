"""Packing many carts into flat CSR arrays, and the per-cart plan (which exact method, how much
scratch memory), shared by the CPU twin and the CUDA kernel.

Layout (C carts, L lines, O eligible offers, M cart-local merchants in all):

* ``line_ptr`` int64[C + 1]: cart ``c``'s lines are ``line_ptr[c] .. line_ptr[c + 1] - 1``, in
  the problem's line order; ``line_qty`` int64[L].
* ``offer_ptr`` int64[L + 1]: line ``l``'s eligible offers (from a problem: its
  ``cand_merchant`` order); ``offer_merchant`` int32[O] the cart-local merchant index,
  ``offer_amount`` int64[O] = quantity * unit price.
* ``merch_ptr`` int64[C + 1]: cart ``c``'s merchants are ``merch_ptr[c] + m`` for local index
  ``m``; only merchants with an eligible offer in the cart are packed. ``merch_row`` int32[M]:
  each one's row of the pricing parameters ``base``, ``extra``, ``free_over``, ``dmin``, ``dbp``
  int64[R] (as in :class:`gpu_engine.problem.CartProblem`). Carts that share merchants can share
  rows (the synthetic batches do: R is the merchant pool, and the copy to the GPU shrinks by the
  five columns of every cart-local merchant); :func:`pack_problems` gives each its own.
  ``merchant_index`` int64[M]: the merchant's index in its problem (to unpack answers).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numba
import numpy as np

from gpu_engine.batch import ops
from gpu_engine.batch import prune as prune_ops
from gpu_engine.batch.ops import DP, FULL, MAX_DP_LINES, MAX_FULL_LINES, TOO_LARGE
from gpu_engine.problem import CartProblem, FulfillmentUnsupported

__all__ = [
    "DP",
    "FULL",
    "MAX_DP_LINES",
    "MAX_FULL_LINES",
    "METHOD_NAMES",
    "TOO_LARGE",
    "BatchPlan",
    "CartArrays",
    "PackedBatch",
    "PlanArrays",
    "pack_carts",
    "pack_problems",
    "plan_batch",
]

METHOD_NAMES = ("batch-full", "batch-dp", "too-large")
# Steps (assignments priced, or DP states visited) above which a cart goes to the planner.
MAX_WORK = 1 << 26


class CartArrays(NamedTuple):
    """The packed arrays the per-cart steps read (:func:`gpu_engine.batch.ops.plan_cart`, the
    kernels), in the order the steps take them: host arrays or their device copies."""

    line_ptr: Any
    line_qty: Any
    offer_ptr: Any
    offer_merchant: Any
    offer_amount: Any
    merch_ptr: Any
    merch_row: Any
    base: Any
    extra: Any
    free_over: Any
    dmin: Any
    dbp: Any

    @classmethod
    def of(cls, arrays: Mapping[str, Any]) -> CartArrays:
        return cls(*(arrays[name] for name in cls._fields))


class PlanArrays(NamedTuple):
    """What the plan writes: :func:`gpu_engine.batch.ops.plan_cart`'s arrays in its argument
    order (per packed merchant ``served``, ``forced`` (scratch) and ``skip``; per cart the
    rest), then :func:`gpu_engine.batch.prune.prune_cart`'s per packed merchant scratch
    ``sub``, ``units`` and per line ``offer_end``."""

    served: Any
    forced: Any
    method: Any
    complexity: Any
    work: Any
    ws: Any
    pick: Any
    skip: Any
    sub: Any
    units: Any
    slack: Any
    line_v: Any
    offer_end: Any
    bound: Any

    @classmethod
    def of(cls, arrays: Mapping[str, Any]) -> PlanArrays:
        return cls(*(arrays[name] for name in cls._fields))

    @classmethod
    def allocate(
        cls, n_carts: int, n_merch: int, n_lines: int, empty: Callable[..., Any] = np.empty
    ) -> PlanArrays:
        """Arrays for ``n_carts`` carts, ``n_merch`` packed merchants and ``n_lines`` lines,
        from ``empty(size, dtype)`` (host by default; the GPU path passes its device
        allocation)."""
        per_merchant = {
            "served": np.int32,
            "forced": np.int32,
            "skip": np.int8,
            "sub": np.int64,
            "units": np.int64,
            "slack": np.int64,
        }
        per_cart = {"method": np.int8}
        return cls(
            *(
                empty(n_merch, per_merchant[name])
                if name in per_merchant
                else empty(n_lines, np.int64)
                if name in ("offer_end", "line_v")
                else empty(n_carts, per_cart.get(name, np.int64))
                for name in cls._fields
            )
        )


@dataclass(frozen=True, eq=False)
class PackedBatch:
    """Carts in CSR form (see the module docstring)."""

    line_ptr: np.ndarray
    line_qty: np.ndarray
    offer_ptr: np.ndarray
    offer_merchant: np.ndarray
    offer_amount: np.ndarray
    merch_ptr: np.ndarray
    merch_row: np.ndarray
    base: np.ndarray
    extra: np.ndarray
    free_over: np.ndarray
    dmin: np.ndarray
    dbp: np.ndarray
    merchant_index: np.ndarray

    @property
    def n_carts(self) -> int:
        return int(self.line_ptr.size - 1)

    @property
    def arrays(self) -> CartArrays:
        return CartArrays.of(self.__dict__)

    @property
    def params(self) -> tuple[np.ndarray, ...]:
        return (self.base, self.extra, self.free_over, self.dmin, self.dbp)

    def nbytes(self) -> int:
        return sum(int(getattr(self, f).nbytes) for f in self.__dataclass_fields__)


@dataclass(frozen=True, eq=False)
class BatchPlan:
    """Per cart: ``method`` (FULL, DP or TOO_LARGE), ``complexity`` (assignments, for FULL),
    ``work`` (estimated steps), and scratch offsets: ``ws_ptr`` int64[C + 1] into the int64
    DP tables (two layers and a cost table, 2^k each) and ``pick_ptr`` into the uint16
    backtrack table (one row of 2^k per merchant). Per packed merchant, ``skip`` int8[M] is 1
    for a merchant the DP may leave out: all its offers were pruned, or it sells only one line
    of the cart (a free one) and another such merchant of that line ships it alone for less (or
    as much, with a lower index). Moving the line to the other never raises the total and
    touches no other merchant, so some optimum never uses it.

    The CPU plan also keeps what the pruning (:mod:`gpu_engine.batch.prune`) left for the
    solve: ``offer_end`` int64[L] (line ``l``'s kept offers end there), per cart ``bound``
    (an assignment's exact total, ``INF`` when not pruned), per packed merchant ``fee_share``
    (:func:`gpu_engine.batch.prune.fee_shares`) and its own copies of
    ``offer_merchant``/``offer_amount`` with the kept offers first in each line. The GPU plan
    leaves them on the device (None here)."""

    method: np.ndarray
    complexity: np.ndarray
    work: np.ndarray
    ws_ptr: np.ndarray
    pick_ptr: np.ndarray
    skip: np.ndarray
    offer_end: np.ndarray | None = None
    bound: np.ndarray | None = None
    fee_share: np.ndarray | None = None
    offer_merchant: np.ndarray | None = None
    offer_amount: np.ndarray | None = None

    def scratch_bytes(self, lo: int, hi: int) -> int:
        ws = int(self.ws_ptr[hi] - self.ws_ptr[lo])
        return ws * 8 + int(self.pick_ptr[hi] - self.pick_ptr[lo]) * 2

    def chunks(self, limit_bytes: int) -> list[tuple[int, int]]:
        """Consecutive cart ranges whose scratch fits ``limit_bytes`` (a range holds at least
        one cart, however large its scratch)."""
        used = self.ws_ptr * 8 + self.pick_ptr * 2
        n = self.method.size
        out: list[tuple[int, int]] = []
        lo = 0
        while lo < n:
            hi = int(np.searchsorted(used, used[lo] + limit_bytes, side="right")) - 1
            hi = min(max(hi, lo + 1), n)
            out.append((lo, hi))
            lo = hi
        return out


def pack_carts(
    *,
    line_counts: np.ndarray,
    line_qty: np.ndarray,
    offer_counts: np.ndarray,
    offer_merchant: np.ndarray,
    offer_price: np.ndarray,
    merchant_counts: np.ndarray,
    merchant_row: np.ndarray,
    merchant_index: np.ndarray,
    params: Sequence[np.ndarray] | np.ndarray,
) -> PackedBatch:
    """The CSR batch (see the module docstring) from plain columns, carts in order:
    ``line_counts[c]`` lines and ``merchant_counts[c]`` packed merchants per cart;
    ``line_qty`` and ``offer_counts`` (eligible offers) per line; per offer, grouped by line in
    candidate order, its cart-local merchant and unit price; per packed merchant its pricing
    row (into ``params``, five rows: base, extra, free_over, dmin, dbp) and its index in its
    problem. Every builder of a batch goes through here, so the format is written once."""
    line_qty = np.ascontiguousarray(line_qty, dtype=np.int64)
    offer_ptr = csr_offsets(offer_counts)
    offer_line = np.repeat(np.arange(line_qty.size), offer_counts)
    base, extra, free_over, dmin, dbp = (np.ascontiguousarray(p, dtype=np.int64) for p in params)
    return PackedBatch(
        line_ptr=csr_offsets(line_counts),
        line_qty=line_qty,
        offer_ptr=offer_ptr,
        offer_merchant=np.asarray(offer_merchant).astype(np.int32),
        offer_amount=line_qty[offer_line] * np.asarray(offer_price, dtype=np.int64),
        merch_ptr=csr_offsets(merchant_counts),
        merch_row=np.asarray(merchant_row).astype(np.int32),
        base=base,
        extra=extra,
        free_over=free_over,
        dmin=dmin,
        dbp=dbp,
        merchant_index=np.asarray(merchant_index).astype(np.int64),
    )


def pack_problems(problems: Sequence[CartProblem]) -> PackedBatch:
    """CSR arrays of ``problems`` (in order), simple carts only: these arrays price version 1
    (``solve_batch`` sends the other carts to :mod:`gpu_engine.batch.v2_pack`'s arrays). The
    Python loop only gathers each problem's arrays; compaction is one njit pass over their
    concatenation."""
    for each in problems:
        if not each.simple:
            raise FulfillmentUnsupported(
                "algorithm",
                "pack_problems",
                "packs simple carts only; solve_batch takes version 2 carts",
            )
    n = len(problems)
    shapes = np.zeros((n, 3), dtype=np.int64)  # lines, candidate width, merchants
    qty, counts, cand, price = [], [], [], []
    params: list[np.ndarray] = []
    for c, p in enumerate(problems):
        shapes[c] = (p.n_items, p.cand_merchant.shape[1], p.n_merchants)
        qty.append(p.quantity)
        counts.append(p.cand_count)
        cand.append(p.cand_merchant.ravel())
        price.append(p.price.ravel())
        params.extend(p.merchant_params)
    line_ptr = csr_offsets(shapes[:, 0])
    line_counts = _cat(counts, np.int64)
    offer_ptr = csr_offsets(line_counts)
    grids = np.column_stack([shapes[:, 0] * shapes[:, 1], shapes[:, 0] * shapes[:, 2]])
    merch, unit, merch_ptr, index = _compact(
        line_ptr,
        offer_ptr,
        shapes,
        csr_offsets(grids[:, 0]),
        _cat(cand, np.int32),
        csr_offsets(grids[:, 1]),
        _cat(price, np.int64),
    )
    # Each problem's five parameter arrays, merchant by merchant, then the used ones.
    all_params = _cat(params, np.int64)
    merchant_counts = merch_ptr[1:] - merch_ptr[:-1]
    first = np.repeat(csr_offsets(5 * shapes[:, 2])[:-1], merchant_counts)
    stride = np.repeat(shapes[:, 2], merchant_counts)
    return pack_carts(
        line_counts=shapes[:, 0],
        line_qty=_cat(qty, np.int64),
        offer_counts=line_counts,
        offer_merchant=merch,
        offer_price=unit,
        merchant_counts=merchant_counts,
        merchant_row=np.arange(index.size, dtype=np.int32),
        merchant_index=index,
        params=[all_params[first + k * stride + index] for k in range(5)],
    )


@numba.njit(cache=True)
def _compact(line_ptr, offer_ptr, shapes, cand_ptr, cand, price_ptr, price):
    """Offers in each line's candidate order with cart-local merchants (used merchants only,
    numbered in the problem's merchant order) and unit prices; returns (merchant, unit price,
    merch_ptr, problem index of each local merchant)."""
    n_carts = line_ptr.size - 1
    n_offers = offer_ptr[-1]
    merch = np.empty(n_offers, dtype=np.int32)
    unit = np.empty(n_offers, dtype=np.int64)
    merch_ptr = np.zeros(n_carts + 1, dtype=np.int64)
    index = np.empty(n_offers, dtype=np.int64)
    n_index = 0
    for c in range(n_carts):
        width = shapes[c, 1]
        n_merch = shapes[c, 2]
        local = np.full(n_merch, -1, dtype=np.int64)
        for i in range(shapes[c, 0]):
            line = line_ptr[c] + i
            for k in range(offer_ptr[line + 1] - offer_ptr[line]):
                local[cand[cand_ptr[c] + i * width + k]] = 0
        for m in range(n_merch):
            if local[m] == 0:
                local[m] = n_index - merch_ptr[c]
                index[n_index] = m
                n_index += 1
        merch_ptr[c + 1] = n_index
        for i in range(shapes[c, 0]):
            line = line_ptr[c] + i
            for k in range(offer_ptr[line + 1] - offer_ptr[line]):
                m = cand[cand_ptr[c] + i * width + k]
                o = offer_ptr[line] + k
                merch[o] = local[m]
                unit[o] = price[price_ptr[c] + i * n_merch + m]
    return merch, unit, merch_ptr, index[:n_index].copy()


def _cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    if not parts:
        return np.zeros(0, dtype=dtype)
    return np.ascontiguousarray(np.concatenate(parts), dtype=dtype)


def csr_offsets(counts: np.ndarray) -> np.ndarray:
    """The CSR offsets (length n + 1, from 0) of n counts."""
    ptr = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    return ptr


def plan_batch(
    batch: PackedBatch,
    *,
    max_work: int = MAX_WORK,
    prefer: int | None = None,
    prune: bool | int = True,
) -> BatchPlan:
    """The cheaper exact method of each cart by its estimated steps, TOO_LARGE when neither
    fits ``max_work`` (or the method's array limits), after pruning the offers that can be in
    no optimal assignment (:mod:`gpu_engine.batch.prune`: carts whose unpruned steps pass
    ``PRUNE_MIN_STEPS``; ``prune=False`` keeps every offer, to measure and test the pruning,
    and ``PRUNE_ALWAYS`` prunes every cart). ``prefer`` (FULL or DP) takes that method wherever it
    fits, so that tests can hold each method against the other."""
    n_lines = batch.line_qty.size
    out = PlanArrays.allocate(batch.n_carts, int(batch.merch_ptr[-1]), n_lines)
    prefer_code = -1 if prefer is None else prefer
    # The pruning reorders offers: in the plan's own copies, never the caller's batch.
    cart = batch.arrays._replace(
        offer_merchant=batch.offer_merchant.copy(), offer_amount=batch.offer_amount.copy()
    )
    _plan(batch.n_carts, tuple(cart), max_work, prefer_code, int(prune), tuple(out))
    return BatchPlan(
        method=out.method,
        complexity=out.complexity,
        work=out.work,
        ws_ptr=csr_offsets(out.ws),
        pick_ptr=csr_offsets(out.pick),
        skip=out.skip,
        offer_end=out.offer_end,
        bound=out.bound,
        fee_share=out.slack,
        offer_merchant=cart.offer_merchant,
        offer_amount=cart.offer_amount,
    )


_prune_cart = numba.njit(cache=True)(prune_ops.prune_cart)
_plan_cart = numba.njit(cache=True)(ops.plan_cart)


# Carts are planned in parallel: each writes only its own entries (and its merchants', lines'
# and offers').
@numba.njit(cache=True, parallel=True)
def _plan(n_carts, cart, max_work, prefer, prune, out):
    """Every cart of ``cart`` (:class:`CartArrays` as a tuple) pruned and planned into
    ``out`` (:class:`PlanArrays` as a tuple)."""
    served, forced, method, complexity, work, ws, pick, skip, sub, units, slack, line_v = out[:12]
    offer_end, bound = out[12], out[13]
    for c in numba.prange(n_carts):
        _prune_cart(c, *cart, prune, sub, units, slack, line_v, offer_end, bound)
        _plan_cart(
            c, *cart, offer_end, bound, max_work, prefer, served, forced, method, complexity, work,
            ws, pick, skip,
        )  # fmt: skip
