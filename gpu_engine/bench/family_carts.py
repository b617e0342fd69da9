"""Instance families the older suites lack (spec-format dicts, deterministic per seed).

Each family stresses one corner of the pricing rules where a heuristic can go wrong:

* ``threshold_deep``: free-shipping thresholds close to one or two typical goods, with deep
  multi-unit discounts (30-60% from 2-4 units) that can push goods back under the threshold.
* ``zero_ties``: many zero prices, merchants that tie on price, 100%-discount merchants and
  free shipping: a cart of plateaus where a local search sees no gradient.
* ``split_punish``: high base fees and per-unit shipping (sometimes above the base fee, so two
  shipments can beat one): splitting a cart across merchants costs dearly.
* ``large_qty``: quantities of 5 to 500 units a line, stock often just short.
* ``fixed_fee``: the public internet-shopping-problem shape: 25-50 lines, 50-100 stores, a
  fixed delivery fee per store, no discounts, thresholds or per-unit fees.
* ``mixed``: every merchant drawn from the extremes of all the families above.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

Cart = dict[str, Any]


def _merchant(m: int, base: int, per: int, free_over: int | None, disc) -> dict[str, Any]:
    return {
        "id": f"m{m:03d}",
        "shipping": {"base_fee": base, "per_extra_unit": per, "free_over": free_over},
        "discount": disc,
    }


def _offers(rng, item_id: str, count: int, n_merchants: int, price_of, stock_of) -> list[dict]:
    rows = []
    for k, m in enumerate(rng.choice(n_merchants, min(count, n_merchants), replace=False)):
        rows.append(
            {
                "item": item_id,
                "merchant": f"m{int(m):03d}",
                "price": int(price_of(int(m))),
                # The first offer always has stock, so every line stays buyable.
                "stock": None if k == 0 else stock_of(),
            }
        )
    return rows


def threshold_deep(seed: int, n_lines: int) -> Cart:
    rng = np.random.default_rng(seed)
    n_merchants = 40
    typical = 3000
    merchants = []
    for m in range(n_merchants):
        disc = None
        if rng.random() < 0.6:
            disc = {
                "min_units": int(rng.integers(2, 5)),
                "basis_points": int(rng.integers(3000, 6001)),
            }
        free_over = int(typical * rng.uniform(0.8, 2.2))
        merchants.append(_merchant(m, int(rng.integers(300, 900)), 0, free_over, disc))
    items, offers = [], []
    for i in range(n_lines):
        item_id = f"sku-{i:03d}"
        items.append({"id": item_id, "quantity": 1 if rng.random() < 0.6 else 2})
        base = typical * rng.uniform(0.5, 1.5)
        offers += _offers(
            rng,
            item_id,
            int(rng.integers(4, 13)),
            n_merchants,
            lambda m, b=base: b * rng.uniform(0.9, 1.1),
            lambda: None,
        )
    return {"items": items, "merchants": merchants, "offers": offers}


def zero_ties(seed: int, n_lines: int) -> Cart:
    rng = np.random.default_rng(seed)
    n_merchants = 30
    merchants = []
    for m in range(n_merchants):
        disc = None
        roll = rng.random()
        if roll < 0.2:
            disc = {"min_units": int(rng.integers(1, 4)), "basis_points": 10000}
        elif roll < 0.4:
            disc = {"min_units": int(rng.integers(2, 6)), "basis_points": 5000}
        free_over = [None, 0, int(rng.integers(500, 5000))][int(rng.integers(0, 3))]
        base = [0, 499, 999][int(rng.integers(0, 3))]
        merchants.append(_merchant(m, base, int(rng.choice([0, 0, 100])), free_over, disc))
    levels = [0, 100, 100, 500, 1000]
    items, offers = [], []
    for i in range(n_lines):
        item_id = f"sku-{i:03d}"
        items.append({"id": item_id, "quantity": int(rng.choice([1, 1, 2]))})
        level = levels[int(rng.integers(0, len(levels)))]
        offers += _offers(
            rng,
            item_id,
            int(rng.integers(3, 11)),
            n_merchants,
            lambda m, lv=level: 0 if rng.random() < 0.3 else lv,
            lambda: None,
        )
    return {"items": items, "merchants": merchants, "offers": offers}


def split_punish(seed: int, n_lines: int) -> Cart:
    rng = np.random.default_rng(seed)
    n_merchants = 50
    merchants = []
    for m in range(n_merchants):
        base = int(rng.integers(500, 2500))
        per = int(rng.integers(100, 600)) if rng.random() < 0.7 else int(base * 1.5)
        free_over = int(rng.integers(20000, 80000)) if rng.random() < 0.3 else None
        merchants.append(_merchant(m, base, per, free_over, None))
    items, offers = [], []
    for i in range(n_lines):
        item_id = f"sku-{i:03d}"
        items.append({"id": item_id, "quantity": int(rng.choice([1, 1, 2, 3]))})
        list_price = math.exp(rng.uniform(math.log(500), math.log(8000)))
        offers += _offers(
            rng,
            item_id,
            int(rng.integers(3, 11)),
            n_merchants,
            lambda m, b=list_price: b * rng.uniform(0.85, 1.15),
            lambda: None,
        )
    return {"items": items, "merchants": merchants, "offers": offers}


def large_qty(seed: int, n_lines: int) -> Cart:
    rng = np.random.default_rng(seed)
    n_merchants = 40
    merchants = []
    for m in range(n_merchants):
        disc = None
        if rng.random() < 0.5:
            disc = {
                "min_units": int(rng.integers(10, 500)),
                "basis_points": int(rng.integers(200, 2000)),
            }
        free_over = int(rng.integers(10**5, 10**7)) if rng.random() < 0.5 else None
        base, per = int(rng.integers(0, 2000)), int(rng.integers(0, 200))
        merchants.append(_merchant(m, base, per, free_over, disc))
    items, offers = [], []
    for i in range(n_lines):
        item_id = f"sku-{i:03d}"
        quantity = int(math.exp(rng.uniform(math.log(5), math.log(500))))
        items.append({"id": item_id, "quantity": quantity})
        list_price = math.exp(rng.uniform(math.log(50), math.log(5000)))
        offers += _offers(
            rng,
            item_id,
            int(rng.integers(3, 11)),
            n_merchants,
            lambda m, b=list_price: b * rng.uniform(0.85, 1.15),
            lambda q=quantity: int(q * rng.uniform(0.8, 3.0)),
        )
    return {"items": items, "merchants": merchants, "offers": offers}


def fixed_fee(seed: int, n_lines: int) -> Cart:
    """The internet-shopping-problem shape; ``n_lines`` is clamped to its 25-50 lines."""
    rng = np.random.default_rng(seed)
    n_lines = min(max(n_lines, 25), 50)
    n_merchants = int(rng.integers(50, 101))
    merchants = [
        _merchant(m, int(rng.integers(200, 2000)), 0, None, None) for m in range(n_merchants)
    ]
    items, offers = [], []
    for i in range(n_lines):
        item_id = f"sku-{i:03d}"
        items.append({"id": item_id, "quantity": 1})
        base = rng.uniform(500, 10000)
        offers += _offers(
            rng,
            item_id,
            int(rng.integers(n_merchants // 4, n_merchants // 2 + 1)),
            n_merchants,
            lambda m, b=base: b * rng.uniform(0.8, 1.2),
            lambda: None,
        )
    return {"items": items, "merchants": merchants, "offers": offers}


def mixed(seed: int, n_lines: int) -> Cart:
    rng = np.random.default_rng(seed)
    n_merchants = 60
    merchants = []
    for m in range(n_merchants):
        disc = None
        if rng.random() < 0.5:
            disc = {
                "min_units": int(rng.integers(1, 6)),
                "basis_points": int(rng.choice([500, 3000, 6000, 10000])),
            }
        free_over = [None, 0, int(rng.integers(1000, 20000))][int(rng.integers(0, 3))]
        base = int(rng.choice([0, 499, 1500]))
        per = int(rng.choice([0, 100, 2000]))
        merchants.append(_merchant(m, base, per, free_over, disc))
    items, offers = [], []
    for i in range(n_lines):
        item_id = f"sku-{i:03d}"
        items.append({"id": item_id, "quantity": int(rng.choice([1, 1, 2, 5, 50]))})
        list_price = float(rng.choice([0, 100, 1000, 10000]))
        offers += _offers(
            rng,
            item_id,
            int(rng.integers(2, 13)),
            n_merchants,
            lambda m, b=list_price: b * rng.choice([1.0, 1.0, 0.9, 1.2]),
            lambda: None,
        )
    return {"items": items, "merchants": merchants, "offers": offers}


FAMILIES: dict[str, Callable[[int, int], Cart]] = {
    "threshold_deep": threshold_deep,
    "zero_ties": zero_ties,
    "split_punish": split_punish,
    "large_qty": large_qty,
    "fixed_fee": fixed_fee,
    "mixed": mixed,
}
