"""Seeded carts shaped like real shoppers' (issue 30's "realistic mix"), generated straight into
the packed CSR form (:func:`gpu_engine.batch.pack.pack_carts`), as :mod:`.synthetic` does for the
light benchmark carts. :func:`gpu_engine.batch.synthetic.cart_problem` turns any one cart back
into a :class:`CartProblem` for the per-cart check.

The mix, version 1 (every draw uniform unless said otherwise):

* the cart's market: 4 to 20 merchants drawn without repeats from a pool of ``pool``;
* 3 to 14 lines, quantity 1 to 3;
* 2 to 8 offers a line (at most the market's size), from distinct merchants of the market;
* an item's list price log-normal around 15 EUR (``exp(N(7.3, 0.9))`` cents); each offer's
  unit price the list price times 0.7 to 1.3 (within about +-30% across merchants);
* a pool merchant's shipping: base fee 0 to 8 EUR, per extra unit 0, 0.50, 1.00 or 1.50 EUR,
  free shipping over 25 to 100 EUR for 80% of them, a 3 to 10% discount from 2 to 5 units for
  a third of them;
* stock limits on half the carts: there, each offer is out of stock (not eligible) with
  probability 0.3, a line keeping at least one offer.

Only merchants with an eligible offer in the cart are packed (cart-local numbering in the
order they first appear); a packed merchant's pricing row is its pool row.
"""

from __future__ import annotations

import numba
import numpy as np

from gpu_engine.batch.pack import PackedBatch, pack_carts
from gpu_engine.batch.synthetic import merchant_pool

BASE_FEES = np.array([0, 199, 299, 399, 499, 599, 699, 799], dtype=np.int64)
EXTRA_FEES = np.array([0, 50, 100, 150], dtype=np.int64)
FREE_OVER = np.array([2500, 3500, 4900, 5000, 7500, 10000], dtype=np.int64)
DISCOUNT_BP = np.array([300, 500, 750, 1000], dtype=np.int64)

MIN_LINES, MAX_LINES = 3, 14
MIN_OFFERS, MAX_OFFERS = 2, 8
MIN_MARKET, MAX_MARKET = 4, 20
OUT_OF_STOCK = 0.3


def mix_batch(n_carts: int, *, seed: int = 0, pool: int = 1000) -> PackedBatch:
    """``n_carts`` carts of the version 1 mix (see the module docstring), deterministic in
    ``seed``."""
    rng = np.random.default_rng(seed)
    params = mix_merchant_pool(rng, pool)
    cols = _fill_mix(n_carts, pool, int(rng.integers(1 << 31)))
    line_counts, qty, offer_counts, merch, price, merch_counts, index = cols
    return pack_carts(
        line_counts=line_counts,
        line_qty=qty,
        offer_counts=offer_counts,
        offer_merchant=merch,
        offer_price=price,
        merchant_counts=merch_counts,
        merchant_row=index,
        merchant_index=index,
        params=params,
    )


def mix_merchant_pool(rng: np.random.Generator, pool: int) -> list[np.ndarray]:
    """The pool's pricing rows (base, extra, free_over, dmin, dbp)."""
    return merchant_pool(
        rng,
        pool,
        base_fees=BASE_FEES,
        extra_fees=EXTRA_FEES,
        free_over=FREE_OVER,
        discount_bp=DISCOUNT_BP,
        free_share=0.8,
        discount_share=1 / 3,
    )


@numba.njit(cache=True)
def _fill_mix(n_carts, pool, seed):
    """The carts' columns: lines a cart, quantity a line, eligible offers a line, per offer
    its cart-local merchant and unit price, packed merchants a cart, their pool rows."""
    np.random.seed(seed)
    n_lines_max = n_carts * MAX_LINES
    line_counts = np.empty(n_carts, dtype=np.int64)
    merch_counts = np.empty(n_carts, dtype=np.int64)
    qty = np.empty(n_lines_max, dtype=np.int64)
    offer_counts = np.empty(n_lines_max, dtype=np.int64)
    merch = np.empty(n_lines_max * MAX_OFFERS, dtype=np.int32)
    price = np.empty(n_lines_max * MAX_OFFERS, dtype=np.int64)
    index = np.empty(n_carts * MAX_MARKET, dtype=np.int64)
    market = np.empty(MAX_MARKET, dtype=np.int64)
    local = np.empty(MAX_MARKET, dtype=np.int64)
    deck = np.empty(MAX_MARKET, dtype=np.int64)
    keep = np.empty(MAX_OFFERS, dtype=np.bool_)
    n_line = 0
    n_offer = 0
    n_index = 0
    for c in range(n_carts):
        size = np.random.randint(MIN_MARKET, MAX_MARKET + 1)
        # The market: ``size`` distinct pool merchants (rejection: the pool is large).
        for j in range(size):
            while True:
                g = np.random.randint(0, pool)
                clash = False
                for p in range(j):
                    if market[p] == g:
                        clash = True
                if not clash:
                    break
            market[j] = g
            local[j] = -1
        limited = np.random.random() < 0.5
        lines = np.random.randint(MIN_LINES, MAX_LINES + 1)
        line_counts[c] = lines
        first = n_index
        for _ in range(lines):
            qty[n_line] = np.random.randint(1, 4)
            list_price = np.exp(np.random.normal(7.3, 0.9))
            r = min(np.random.randint(MIN_OFFERS, MAX_OFFERS + 1), size)
            # r distinct market merchants: a partial shuffle of the market's positions.
            for j in range(size):
                deck[j] = j
            kept = 0
            for j in range(r):
                pick = j + np.random.randint(0, size - j)
                deck[j], deck[pick] = deck[pick], deck[j]
                keep[j] = not (limited and np.random.random() < OUT_OF_STOCK)
                kept += keep[j]
            if kept == 0:
                keep[np.random.randint(0, r)] = True
            count = 0
            for j in range(r):
                unit = np.int64(list_price * (0.7 + 0.6 * np.random.random())) + 1
                if not keep[j]:
                    continue
                at = deck[j]
                if local[at] < 0:
                    local[at] = n_index - first
                    index[n_index] = market[at]
                    n_index += 1
                merch[n_offer] = local[at]
                price[n_offer] = unit
                n_offer += 1
                count += 1
            offer_counts[n_line] = count
            n_line += 1
        merch_counts[c] = n_index - first
    return (
        line_counts,
        qty[:n_line].copy(),
        offer_counts[:n_line].copy(),
        merch[:n_offer].copy(),
        price[:n_offer].copy(),
        merch_counts,
        index[:n_index].copy(),
    )


def take_carts(batch: PackedBatch, carts: np.ndarray) -> PackedBatch:
    """The carts ``carts`` (indexes, in that order) as a batch of their own, sharing the
    batch's pricing rows (to time or check one cart shape at a time)."""
    carts = np.asarray(carts, dtype=np.int64)
    lines = _ranges(batch.line_ptr, carts)
    offers = _ranges(batch.offer_ptr, lines)
    merchants = _ranges(batch.merch_ptr, carts)
    return PackedBatch(
        line_ptr=_offsets(batch.line_ptr, carts),
        line_qty=batch.line_qty[lines],
        offer_ptr=_offsets(batch.offer_ptr, lines),
        offer_merchant=batch.offer_merchant[offers],
        offer_amount=batch.offer_amount[offers],
        merch_ptr=_offsets(batch.merch_ptr, carts),
        merch_row=batch.merch_row[merchants],
        base=batch.base,
        extra=batch.extra,
        free_over=batch.free_over,
        dmin=batch.dmin,
        dbp=batch.dbp,
        merchant_index=batch.merchant_index[merchants],
    )


def _ranges(ptr: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The entries ``ptr[r] .. ptr[r + 1] - 1`` of every row ``r`` of ``rows``, in order."""
    counts = ptr[rows + 1] - ptr[rows]
    starts = np.repeat(ptr[rows] - np.cumsum(counts) + counts, counts)
    return starts + np.arange(int(counts.sum()), dtype=np.int64)


def _offsets(ptr: np.ndarray, rows: np.ndarray) -> np.ndarray:
    out = np.zeros(rows.size + 1, dtype=np.int64)
    np.cumsum(ptr[rows + 1] - ptr[rows], out=out[1:])
    return out
