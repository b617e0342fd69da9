"""Random version 2 carts (spec JSON): merchants with 1-3 nodes, parcel rates by weight, stock
per node, thresholds and discounts that count every node of a merchant.

Built to be hard rather than easy: heavy items that tip a parcel into the next tier, prices
equal across a merchant's nodes (ties the solvers must break consistently), thresholds that
only one merchant's two nodes together reach, and a few lines with one eligible offer.
"""

from __future__ import annotations

import random
from typing import Any

_LIGHT_G = (0, 80, 250, 400, 900)
_HEAVY_G = (2500, 4200, 7800, 12500)


def _tiers(rng: random.Random) -> dict[str, Any]:
    if rng.random() < 0.25:
        return {}
    edges = sorted(rng.sample((1000, 2000, 3000, 5000, 10000, 20000), rng.randint(1, 4)))
    fee = 0
    tiers = []
    for up_to in edges:
        fee += rng.choice((0, 150, 300, 450))
        tiers.append({"up_to_g": up_to, "fee": fee})
    if rng.random() < 0.2:  # tier fees need not increase (spec)
        tiers[0]["fee"] = tiers[-1]["fee"] + 100
    return {"weight_tiers": tiers, "per_kg_over": rng.choice((0, 50, 120, 300))}


def _merchant(rng: random.Random, m: int, max_nodes: int, cents: int) -> dict[str, Any]:
    nodes = []
    for n in range(rng.randint(1, max_nodes)):
        shipping = {
            "base_fee": rng.choice((0, 299, 399, 499, 690)) * cents // 100,
            "per_extra_unit": rng.choice((0, 0, 50, 100, 150)) * cents // 100,
            **_tiers(rng),
        }
        nodes.append({"id": f"n{n}", "shipping": shipping})
    merchant: dict[str, Any] = {"id": f"m{m}", "nodes": nodes}
    if rng.random() < 0.6:
        merchant["free_over"] = rng.choice((2500, 4000, 5000, 7500, 10000)) * cents // 100
    if rng.random() < 0.35:
        merchant["discount"] = {
            "min_units": rng.randint(2, 5),
            "basis_points": rng.choice((300, 500, 1000, 2500, 10000)),
        }
    return merchant


def _node_price(rng: random.Random, price: int, cents: int) -> int:
    # Mostly the same price at every node of a merchant: ties the solvers must break.
    if rng.random() < 0.6:
        return price
    return max(0, price + rng.randint(-50, 50) * cents // 100)


def random_v2_cart(
    seed: int,
    n_lines: int,
    *,
    n_merchants: int | None = None,
    max_nodes: int = 3,
    offers: tuple[int, int] = (1, 4),
    cents: int = 100,
) -> dict[str, Any]:
    """A seeded version 2 cart of ``n_lines`` lines. ``cents`` scales every amount (100: the
    usual euros; 1: cents; large: money near the service's limits)."""
    rng = random.Random(seed)
    n_merchants = n_merchants or rng.randint(2, 6)
    merchants = [_merchant(rng, m, max_nodes, cents) for m in range(n_merchants)]
    items, cart_offers = [], []
    for i in range(n_lines):
        heavy = rng.random() < 0.3
        weight = rng.choice(_HEAVY_G if heavy else _LIGHT_G)
        quantity = rng.choice((1, 1, 1, 2, 3))
        items.append({"id": f"i{i}", "quantity": quantity, "weight_g": weight})
        base = rng.randint(300, 9000) * cents // 100
        sellers = rng.sample(merchants, min(len(merchants), rng.randint(*offers)))
        for merchant in sellers:
            price = max(0, base + rng.randint(-base // 3, base // 3))
            for node in rng.sample(merchant["nodes"], rng.randint(1, len(merchant["nodes"]))):
                stock = None if rng.random() < 0.6 else rng.randint(0, 4)
                cart_offers.append(
                    {
                        "item": f"i{i}",
                        "merchant": merchant["id"],
                        "node": node["id"],
                        "price": _node_price(rng, price, cents),
                        "stock": stock,
                    }
                )
        # Every line has an eligible offer: the first seller's first node stocks enough.
        first = next(o for o in cart_offers if o["item"] == f"i{i}")
        if first["stock"] is not None and first["stock"] < quantity:
            first["stock"] = quantity
    return {"items": items, "merchants": merchants, "offers": cart_offers}
