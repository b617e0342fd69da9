"""Deterministic benchmark carts (spec-format dicts), shared by the benchmark suites.

Prices follow a per-item list price with merchants 15% under to 25% over it; merchants have
realistic shipping (base fee, per-extra-unit fee, often a free-shipping threshold) and some a
multi-item discount, so every pricing rule is exercised.
"""

from __future__ import annotations

import random
from typing import Any

# The cart that timed out at Jet.com: offers per line (70,442,237,952,000 assignments).
SEED_CART_OFFERS = (32, 17, 19, 16, 29, 9, 25, 10, 16, 17, 24)


def random_merchant(rnd: random.Random, merchant_id: str) -> dict[str, Any]:
    base = rnd.choice([0, 299, 399, 499, 599, 799, 999])
    discount = None
    if rnd.random() < 0.35:
        discount = {"min_units": rnd.randint(2, 5), "basis_points": rnd.choice([300, 500, 1000])}
    return {
        "id": merchant_id,
        "shipping": {
            "base_fee": base,
            "per_extra_unit": rnd.choice([0, 0, 50, 100, 150, 200]),
            "free_over": rnd.choice([None, 2500, 3500, 5000, 7500, 10000]),
        },
        "discount": discount,
    }


def cart_with_offer_counts(
    offer_counts: tuple[int, ...] | list[int], n_merchants: int, *, seed: int
) -> dict[str, Any]:
    """A cart whose line i has exactly ``offer_counts[i]`` eligible offers."""
    rnd = random.Random(seed)
    merchants = [random_merchant(rnd, f"m{m:03d}") for m in range(n_merchants)]
    items, offers = [], []
    for i, count in enumerate(offer_counts):
        item_id = f"sku-{i:03d}"
        items.append({"id": item_id, "quantity": rnd.choice([1, 1, 1, 2, 3])})
        list_price = rnd.randint(300, 15000)
        for m in rnd.sample(range(n_merchants), count):
            offers.append(
                {
                    "item": item_id,
                    "merchant": merchants[m]["id"],
                    "price": int(list_price * rnd.uniform(0.85, 1.25)),
                    "stock": rnd.choice([None, 50, 100]),
                }
            )
    return {"items": items, "merchants": merchants, "offers": offers}


def seed_cart(seed: int = 2015) -> dict[str, Any]:
    """The 11-line Jet.com seed cart's shape (32 merchants carry the widest line)."""
    return cart_with_offer_counts(SEED_CART_OFFERS, 40, seed=seed)


def uniform_cart(n_lines: int, offers: int, n_merchants: int, *, seed: int) -> dict[str, Any]:
    return cart_with_offer_counts([offers] * n_lines, n_merchants, seed=seed)
