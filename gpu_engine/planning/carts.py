"""Random carts for calibration and the GA / planner benchmarks (spec-format dicts).

Like the issue's benchmark carts: each line has 5 to 20 offers among ``n_merchants`` merchants
(100 by default); an item has a list price (log-uniform, 3 to 300 units of currency), a merchant
its own price level (15% under to 15% over) and each offer some noise; 70% of lines buy one
unit, the rest 2 or 3; one offer in ten has limited stock (possibly too little). Merchants charge
a base fee (0 to 9.99) and a per-extra-unit fee (0 to 2.99); 60% ship free over a threshold (25
to 200), 40% give a multi-item discount (2 to 6 units, 2% to 15%). ``thresholds`` and
``discounts`` switch those rules off, which gives the "flat" carts the MILP solves fastest.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def random_merchants(
    rng: np.random.Generator, n_merchants: int, *, thresholds: bool, discounts: bool
) -> list[dict[str, Any]]:
    merchants = []
    for m in range(n_merchants):
        free_over = int(rng.integers(2500, 20000)) if thresholds and rng.random() < 0.6 else None
        discount = None
        if discounts and rng.random() < 0.4:
            discount = {
                "min_units": int(rng.integers(2, 7)),
                "basis_points": int(rng.integers(200, 1500)),
            }
        merchants.append(
            {
                "id": f"m{m:03d}",
                "shipping": {
                    "base_fee": int(rng.integers(0, 1000)),
                    "per_extra_unit": int(rng.integers(0, 300)),
                    "free_over": free_over,
                },
                "discount": discount,
            }
        )
    return merchants


def random_cart(
    seed: int,
    n_lines: int,
    *,
    n_merchants: int = 100,
    offers: tuple[int, int] = (5, 20),
    thresholds: bool = True,
    discounts: bool = True,
) -> dict[str, Any]:
    """A deterministic random cart (see the module docstring); ``offers`` is the inclusive
    range of offers per line, capped at ``n_merchants``."""
    rng = np.random.default_rng(seed)
    merchants = random_merchants(rng, n_merchants, thresholds=thresholds, discounts=discounts)
    level = rng.uniform(0.85, 1.15, n_merchants)
    items, offer_rows = [], []
    for i in range(n_lines):
        item_id = f"sku-{i:03d}"
        quantity = 1 if rng.random() < 0.7 else int(rng.integers(2, 4))
        items.append({"id": item_id, "quantity": quantity})
        count = min(int(rng.integers(offers[0], offers[1] + 1)), n_merchants)
        list_price = math.exp(rng.uniform(math.log(300), math.log(30000)))
        for k, m in enumerate(rng.choice(n_merchants, count, replace=False)):
            # The first offer always has stock, so every line stays buyable.
            limited = k > 0 and rng.random() < 0.1
            offer_rows.append(
                {
                    "item": item_id,
                    "merchant": merchants[m]["id"],
                    "price": int(list_price * level[m] * rng.uniform(0.9, 1.1)),
                    "stock": int(rng.integers(0, 6)) if limited else None,
                }
            )
    return {"items": items, "merchants": merchants, "offers": offer_rows}
