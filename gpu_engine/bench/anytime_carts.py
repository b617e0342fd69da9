"""Cart families where the planner's anytime routes must use the whole budget.

Spec-format dicts (version 1), deterministic per seed:

* ``barely_free``: every line has a *home* merchant whose free-shipping threshold its home
  lines' goods just reach (0-0.5% above it); the other offers are a little cheaper (up to 4%),
  so moving any line away saves a few cents on goods and drops its home merchant under the
  threshold. HiGHS's LP relaxation pays a fraction of each fee, and the proof is slow.
* ``one_cent``: offers and fees that differ by a cent or two: prices at a line's list price
  plus 0-2 cents, base fees 499-501 cents, thresholds within a few cents of a typical
  merchant's goods. Many assignments within cents of each other; a proof must close the gap to
  one cent.
* ``lines200``: the planner's random carts (:func:`gpu_engine.planning.carts.random_cart`:
  thresholds and discounts) at 200 lines with 3-8 offers a line.
* ``big_money``: ``barely_free`` with every amount times 10^6: past HiGHS's trusted range
  (:data:`gpu_engine.solvers.milp.model.HIGHS_MAX_MONEY`), where only the GA (and exact search
  where it fits) runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from gpu_engine.planning.carts import random_cart

Cart = dict[str, Any]


def _merchant(m: int, base: int, per: int, free_over: int | None) -> dict[str, Any]:
    return {
        "id": f"m{m:03d}",
        "shipping": {"base_fee": base, "per_extra_unit": per, "free_over": free_over},
        "discount": None,
    }


def barely_free(seed: int, n_lines: int = 200, *, scale: int = 1) -> Cart:
    rng = np.random.default_rng(seed)
    n_merchants = max(4, n_lines // 7)
    home_goods = np.zeros(n_merchants, dtype=np.int64)
    items, offers = [], []
    for i in range(n_lines):
        item_id = f"sku-{i:03d}"
        quantity = 1 if rng.random() < 0.7 else 2
        items.append({"id": item_id, "quantity": quantity})
        list_price = math.exp(rng.uniform(math.log(500), math.log(5000)))
        count = min(int(rng.integers(3, 7)), n_merchants)
        merchants = rng.choice(n_merchants, count, replace=False)
        home = int(merchants[0])
        for k, m in enumerate(merchants):
            factor = 1.0 if k == 0 else rng.uniform(0.96, 1.02)
            price = int(list_price * factor) * scale
            offers.append({"item": item_id, "merchant": f"m{int(m):03d}", "price": price})
        home_goods[home] += quantity * int(list_price) * scale
    merchants_out = []
    for m in range(n_merchants):
        base = int(rng.integers(400, 1500)) * scale
        per = int(rng.choice([0, 0, 100])) * scale
        free_over = None
        if home_goods[m] > 0:
            free_over = int(home_goods[m] * (1.0 - rng.uniform(0.0, 0.005)))
        merchants_out.append(_merchant(m, base, per, free_over))
    return {"items": items, "merchants": merchants_out, "offers": offers}


def one_cent(seed: int, n_lines: int = 60) -> Cart:
    rng = np.random.default_rng(seed)
    n_merchants = 20
    offers_per_line = (4, 9)
    typical_goods = 3000 * n_lines * 1.3 * 6 / n_merchants
    merchants = []
    for m in range(n_merchants):
        free_over = None
        if rng.random() < 0.6:
            free_over = int(typical_goods * rng.uniform(0.6, 1.4)) // 100 * 100 + int(
                rng.integers(0, 3)
            )
        merchants.append(
            _merchant(m, 499 + int(rng.integers(0, 3)), int(rng.integers(0, 2)), free_over)
        )
    items, offers = [], []
    for i in range(n_lines):
        item_id = f"sku-{i:03d}"
        quantity = 1 if rng.random() < 0.7 else 2
        items.append({"id": item_id, "quantity": quantity})
        list_price = int(rng.integers(10, 60)) * 100
        count = int(rng.integers(offers_per_line[0], offers_per_line[1] + 1))
        for m in rng.choice(n_merchants, count, replace=False):
            price = list_price + int(rng.integers(0, 3))
            offers.append({"item": item_id, "merchant": f"m{int(m):03d}", "price": price})
    return {"items": items, "merchants": merchants, "offers": offers}


def lines200(seed: int, n_lines: int = 200) -> Cart:
    return random_cart(seed, n_lines, n_merchants=60, offers=(3, 8))


def big_money(seed: int, n_lines: int = 200) -> Cart:
    return barely_free(seed, n_lines, scale=10**6)


# Family -> (generator, its default line count).
FAMILIES: dict[str, tuple[Callable[..., Cart], int]] = {
    "barely_free": (barely_free, 200),
    "one_cent": (one_cent, 60),
    "lines200": (lines200, 200),
    "big_money": (big_money, 200),
}


def family_cart(family: str, seed: int, n_lines: int | None = None) -> Cart:
    generator, lines = FAMILIES[family]
    return generator(seed, lines if n_lines is None else n_lines)
