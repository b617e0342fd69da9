"""Deterministic version 2 benchmark carts (spec-format dicts): :func:`instances.uniform_cart`'s
shape (every line sold by exactly ``offers`` merchants, prices 15% under to 25% over a list
price) with 1 to ``max_nodes`` fulfillment nodes per merchant, each with its own parcel rate
(base fee, per-extra-unit fee, weight tiers and a per-kilogram fee over the last tier), its own
stock and prices, and items with weights (about a quarter heavy).
"""

from __future__ import annotations

import random
from typing import Any

_LIGHT_G = (0, 120, 300, 450, 800, 1200)
_HEAVY_G = (2500, 4000, 7500, 12000)


def _node_shipping(rnd: random.Random) -> dict[str, Any]:
    shipping: dict[str, Any] = {
        "base_fee": rnd.choice([0, 299, 399, 499, 599, 799]),
        "per_extra_unit": rnd.choice([0, 0, 50, 100, 150]),
    }
    if rnd.random() < 0.75:
        edges = sorted(rnd.sample([1000, 2000, 5000, 10000, 20000, 31500], rnd.randint(1, 4)))
        fee = 0
        tiers = []
        for up_to in edges:
            fee += rnd.choice([0, 150, 250, 400, 700])
            tiers.append({"up_to_g": up_to, "fee": fee})
        shipping["weight_tiers"] = tiers
        shipping["per_kg_over"] = rnd.choice([0, 50, 100, 200])
    return shipping


def _merchant(rnd: random.Random, merchant_id: str, max_nodes: int) -> dict[str, Any]:
    nodes = [
        {"id": f"wh{n}", "shipping": _node_shipping(rnd)} for n in range(rnd.randint(1, max_nodes))
    ]
    merchant: dict[str, Any] = {"id": merchant_id, "nodes": nodes}
    free_over = rnd.choice([None, 2500, 3500, 5000, 7500, 10000])
    if free_over is not None:
        merchant["free_over"] = free_over
    if rnd.random() < 0.35:
        merchant["discount"] = {
            "min_units": rnd.randint(2, 5),
            "basis_points": rnd.choice([300, 500, 1000]),
        }
    return merchant


def v2_uniform_cart(
    n_lines: int, offers: int, n_merchants: int, seed: int, max_nodes: int = 3
) -> dict[str, Any]:
    """A cart of ``n_lines`` lines, each sold by exactly ``offers`` of ``n_merchants``
    merchants (eligible at one or more of the seller's nodes: the first node a seller lists
    for a line always has the stock), merchants with 1 to ``max_nodes`` nodes."""
    rnd = random.Random(seed)
    merchants = [_merchant(rnd, f"m{m:03d}", max_nodes) for m in range(n_merchants)]
    items, cart_offers = [], []
    for i in range(n_lines):
        item_id = f"sku-{i:03d}"
        quantity = rnd.choice([1, 1, 1, 2, 3])
        weight = rnd.choice(_HEAVY_G if rnd.random() < 0.25 else _LIGHT_G)
        items.append({"id": item_id, "quantity": quantity, "weight_g": weight})
        list_price = rnd.randint(300, 15000)
        for m in rnd.sample(range(n_merchants), offers):
            merchant = merchants[m]
            price = int(list_price * rnd.uniform(0.85, 1.25))
            nodes = merchant["nodes"]
            stocked = rnd.sample(nodes, rnd.randint(1, len(nodes)))
            for j, node in enumerate(stocked):
                # Mostly one price at every node; some nodes a little dearer or cheaper.
                node_price = price if rnd.random() < 0.6 else int(price * rnd.uniform(0.95, 1.05))
                stock = rnd.choice([None, None, 50, 100, 0, 1])
                if j == 0 and stock is not None and stock < quantity:
                    stock = quantity
                cart_offers.append(
                    {
                        "item": item_id,
                        "merchant": merchant["id"],
                        "node": node["id"],
                        "price": node_price,
                        "stock": stock,
                    }
                )
    return {"items": items, "merchants": merchants, "offers": cart_offers}
