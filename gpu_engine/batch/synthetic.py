"""Seeded synthetic carts for the batch bench and the device tests, generated straight into
the packed CSR form (building a million :class:`CartProblem` objects would time Python, not the
engine), and the way back to a :class:`CartProblem` for any one cart (to check a sample against
the per-cart solvers).

Shape: lines per cart 2 + a geometric draw (p = 0.35) truncated to 2 .. ``max_lines`` (mean
about 3.8; 0.1% of carts have 15 lines);
offers per line 1 + Binomial(max_offers - 1, 0.3) (mean about 4.3 for 12), from distinct
merchants of a pool of ``pool`` whose popularity falls as 1 / rank (a few large merchants sell
most products, so carts share merchants); unit prices log-normal around 15 EUR, +-15% between
merchants; quantities 1 (75%), 2 or 3. Merchants: base fee 0 to 7.99, per extra unit 0 to 1.50,
free shipping over 25 to 75 EUR for 70% of them, a volume discount (2 to 5 units, 3 to 15%)
for 25%.
"""

from __future__ import annotations

import numba
import numpy as np

from gpu_engine.batch.pack import PackedBatch, pack_carts
from gpu_engine.problem import CartProblem

BASE_FEES = np.array([0, 299, 399, 499, 599, 799], dtype=np.int64)
EXTRA_FEES = np.array([0, 0, 50, 100, 150], dtype=np.int64)
FREE_OVER = np.array([2500, 3500, 4900, 5000, 7500], dtype=np.int64)
DISCOUNT_BP = np.array([300, 500, 1000, 1500], dtype=np.int64)


def synthetic_batch(
    n_carts: int, *, seed: int = 0, max_lines: int = 15, max_offers: int = 12, pool: int = 300
) -> PackedBatch:
    rng = np.random.default_rng(seed)
    n_lines = 2 + _truncated_geometric(rng, 0.35, max_lines - 1, n_carts)
    line_ptr = np.zeros(n_carts + 1, dtype=np.int64)
    np.cumsum(n_lines, out=line_ptr[1:])
    n_total = int(line_ptr[-1])
    offers = 1 + rng.binomial(max_offers - 1, 0.3, n_total)
    offers = np.minimum(offers, pool)
    offer_ptr = np.zeros(n_total + 1, dtype=np.int64)
    np.cumsum(offers, out=offer_ptr[1:])
    params = _merchant_pool(rng, pool)
    weights = 1.0 / np.arange(1, pool + 1)
    cumulative = np.cumsum(weights) / weights.sum()
    qty = rng.choice(np.array([1, 2, 3]), n_total, p=[0.75, 0.18, 0.07]).astype(np.int64)
    unit = np.exp(rng.normal(7.3, 0.9, n_total)).astype(np.int64) + 1
    merch, price, merch_ptr, index = _fill(
        line_ptr, offer_ptr, unit, cumulative, int(rng.integers(1 << 31))
    )
    return pack_carts(
        line_counts=n_lines,
        line_qty=qty,
        offer_counts=offers,
        offer_merchant=merch,
        offer_price=price,
        merchant_counts=np.diff(merch_ptr),
        merchant_row=index,
        merchant_index=index,
        params=params,
    )


def _truncated_geometric(rng: np.random.Generator, p: float, top: int, size: int) -> np.ndarray:
    """Draws of 0 .. top - 1 with P(j) proportional to (1 - p)^j: the geometric law given that
    it stays below ``top`` (clamping instead would pile the tail up on the largest size)."""
    tail = 1.0 - (1.0 - p) ** top
    draws = np.floor(np.log1p(-rng.random(size) * tail) / np.log1p(-p)).astype(np.int64)
    return np.minimum(draws, top - 1)


def merchant_pool(
    rng: np.random.Generator,
    pool: int,
    *,
    base_fees: np.ndarray,
    extra_fees: np.ndarray,
    free_over: np.ndarray,
    discount_bp: np.ndarray,
    free_share: float,
    discount_share: float,
) -> list[np.ndarray]:
    """A pool of ``pool`` merchants' pricing rows in the packed order (base, extra, free_over,
    dmin, dbp): fees drawn from the arrays given, a threshold for ``free_share`` of them, a
    discount from 2-5 units for ``discount_share``."""
    free = np.where(rng.random(pool) < free_share, rng.choice(free_over, pool), -1)
    has_discount = rng.random(pool) < discount_share
    return [
        rng.choice(base_fees, pool),
        rng.choice(extra_fees, pool),
        free.astype(np.int64),
        np.where(has_discount, rng.integers(2, 6, pool), 0).astype(np.int64),
        np.where(has_discount, rng.choice(discount_bp, pool), 0).astype(np.int64),
    ]


def _merchant_pool(rng: np.random.Generator, pool: int) -> list[np.ndarray]:
    return merchant_pool(
        rng,
        pool,
        base_fees=BASE_FEES,
        extra_fees=EXTRA_FEES,
        free_over=FREE_OVER,
        discount_bp=DISCOUNT_BP,
        free_share=0.7,
        discount_share=0.25,
    )


@numba.njit(cache=True)
def _fill(line_ptr, offer_ptr, unit, cumulative, seed):
    """Merchants (distinct within a line, cart-local numbering) and unit prices of every
    offer."""
    np.random.seed(seed)
    n_carts = line_ptr.size - 1
    n_offers = offer_ptr[-1]
    merch = np.empty(n_offers, dtype=np.int32)
    unit_price = np.empty(n_offers, dtype=np.int64)
    merch_ptr = np.zeros(n_carts + 1, dtype=np.int64)
    index = np.empty(n_offers, dtype=np.int64)  # at most one local merchant per offer
    n_index = 0
    for c in range(n_carts):
        first = n_index
        for line in range(line_ptr[c], line_ptr[c + 1]):
            for o in range(offer_ptr[line], offer_ptr[line + 1]):
                while True:
                    g = np.searchsorted(cumulative, np.random.random())
                    clash = False
                    for p in range(offer_ptr[line], o):
                        if index[first + merch[p]] == g:
                            clash = True
                    if not clash:
                        break
                local = -1
                for m in range(first, n_index):
                    if index[m] == g:
                        local = m - first
                if local < 0:
                    index[n_index] = g
                    local = n_index - first
                    n_index += 1
                merch[o] = local
                unit_price[o] = np.int64(unit[line] * (0.85 + 0.35 * np.random.random()))
        merch_ptr[c + 1] = n_index
    return merch, unit_price, merch_ptr, index[:n_index].copy()


def cart_problem(batch: PackedBatch, c: int) -> CartProblem:
    """Cart ``c`` of a packed batch as a :class:`CartProblem` (every offer in stock)."""
    l0, l1 = int(batch.line_ptr[c]), int(batch.line_ptr[c + 1])
    m0, m1 = int(batch.merch_ptr[c]), int(batch.merch_ptr[c + 1])
    rows = batch.merch_row[m0:m1]
    offer_item, offer_merchant, offer_price = [], [], []
    for i, line in enumerate(range(l0, l1)):
        q = int(batch.line_qty[line])
        for o in range(int(batch.offer_ptr[line]), int(batch.offer_ptr[line + 1])):
            offer_item.append(i)
            offer_merchant.append(int(batch.offer_merchant[o]))
            offer_price.append(int(batch.offer_amount[o]) // q)
    return CartProblem.from_arrays(
        item_ids=[f"line-{i}" for i in range(l1 - l0)],
        quantities=batch.line_qty[l0:l1],
        merchant_ids=[f"m-{int(g)}" for g in batch.merchant_index[m0:m1]],
        base_fee=batch.base[rows],
        per_extra_unit=batch.extra[rows],
        free_over=batch.free_over[rows],
        disc_min_units=batch.dmin[rows],
        disc_bp=batch.dbp[rows],
        offer_item=offer_item,
        offer_merchant=offer_merchant,
        offer_price=offer_price,
        offer_stock=[-1] * len(offer_item),
    )
