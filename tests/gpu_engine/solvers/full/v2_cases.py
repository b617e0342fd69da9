"""Version 2 carts for the full search's tests: seeded random ones small enough for the pure
Python brute force, and hand-built ones that are hard on purpose."""

from __future__ import annotations

from typing import Any

from gpu_engine import CartProblem
from gpu_engine.fuzz.v2_carts import random_v2_cart
from gpu_engine.problem import MONEY_LIMIT, ProblemError

# The brute force prices every assignment in Python: a few thousand at most a cart.
MAX_BRUTE = 3000


def small_v2_cart(seed: int, n_lines: int, *, cents: int = 100) -> dict[str, Any]:
    """A seeded cart of 3-7 lines, 1-3 nodes a merchant, with at most :data:`MAX_BRUTE`
    assignments: the offers per line and nodes shrink with the line count."""
    offers, nodes = ((1, 3), 3) if n_lines <= 4 else ((1, 2), 3) if n_lines <= 6 else ((1, 2), 2)
    cart = random_v2_cart(seed, n_lines, offers=offers, max_nodes=nodes, cents=cents)
    problem = CartProblem.from_dict(cart)
    if problem.complexity > MAX_BRUTE:
        # Rare draws: every line keeps its first two offers (the first stays eligible).
        kept: dict[str, int] = {}
        offers_kept = []
        for offer in cart["offers"]:
            if kept.get(offer["item"], 0) < 2:
                kept[offer["item"]] = kept.get(offer["item"], 0) + 1
                offers_kept.append(offer)
        cart = {**cart, "offers": offers_kept}
    assert CartProblem.from_dict(cart).complexity <= MAX_BRUTE
    return cart


def huge_money_carts(count: int, n_lines: int = 4) -> list[dict[str, Any]]:
    """Seeded carts with prices a tenth of the service's limit and more (the first ``count``
    seeds whose worst case the problem accepts; the others are refused as the spec says)."""
    carts = []
    seed = 0
    while len(carts) < count:
        seed += 1
        try:
            cart = small_v2_cart(seed, n_lines, cents=10**16)
        except ProblemError:
            continue
        assert max(o["price"] for o in cart["offers"]) > MONEY_LIMIT // 10
        carts.append(cart)
    return carts


def _node(node_id: str, base: int, extra: int = 0, tiers=(), per_kg: int = 0) -> dict[str, Any]:
    shipping: dict[str, Any] = {"base_fee": base, "per_extra_unit": extra}
    if tiers:
        shipping["weight_tiers"] = [{"up_to_g": up, "fee": fee} for up, fee in tiers]
        shipping["per_kg_over"] = per_kg
    return {"id": node_id, "shipping": shipping}


def tier_tipping_cart() -> dict[str, Any]:
    """Two heavy lines: together they tip one node's parcel past its last tier (per kg over),
    so splitting them over two nodes of the merchant, or to another merchant, can pay."""
    tiers = ((2000, 0), (5000, 400))
    return {
        "items": [
            {"id": "anvil", "quantity": 1, "weight_g": 4200},
            {"id": "bolt", "quantity": 2, "weight_g": 900},
            {"id": "card", "quantity": 1, "weight_g": 0},
        ],
        "merchants": [
            {
                "id": "heavy",
                "free_over": 20000,
                "nodes": [
                    _node("north", 300, 50, tiers, per_kg=350),
                    _node("south", 450, 0, ((3000, 100),), per_kg=500),
                ],
            },
            {"id": "light", "nodes": [_node("only", 590)]},
        ],
        "offers": [
            {"item": "anvil", "merchant": "heavy", "node": "north", "price": 5000},
            {"item": "anvil", "merchant": "heavy", "node": "south", "price": 5000},
            {"item": "bolt", "merchant": "heavy", "node": "north", "price": 700},
            {"item": "bolt", "merchant": "heavy", "node": "south", "price": 690},
            {"item": "bolt", "merchant": "light", "node": "only", "price": 650},
            {"item": "card", "merchant": "heavy", "node": "north", "price": 250},
            {"item": "card", "merchant": "light", "node": "only", "price": 200},
        ],
    }


def two_node_threshold_cart() -> dict[str, Any]:
    """A free-shipping threshold only two nodes of one merchant reach together: each node's
    lines alone stay under it, and another merchant is cheaper line by line."""
    return {
        "items": [
            {"id": "x", "quantity": 1, "weight_g": 500},
            {"id": "y", "quantity": 1, "weight_g": 500},
        ],
        "merchants": [
            {
                "id": "big",
                "free_over": 5000,
                "nodes": [_node("hamburg", 690), _node("munich", 690)],
            },
            {"id": "other", "nodes": [_node("only", 0)]},
        ],
        "offers": [
            {"item": "x", "merchant": "big", "node": "hamburg", "price": 3000, "stock": 1},
            {"item": "x", "merchant": "big", "node": "munich", "price": 3000, "stock": 0},
            {"item": "y", "merchant": "big", "node": "munich", "price": 2500, "stock": 5},
            {"item": "y", "merchant": "big", "node": "hamburg", "price": 2500, "stock": 0},
            {"item": "y", "merchant": "other", "node": "only", "price": 2300},
        ],
    }


def tied_cart() -> dict[str, Any]:
    """Equal prices and rates at every node: many assignments share the best total."""
    tiers = ((1000, 0), (4000, 200))
    return {
        "items": [{"id": f"i{i}", "quantity": 1 + i % 2, "weight_g": 600} for i in range(4)],
        "merchants": [
            {
                "id": f"m{m}",
                "free_over": 3000,
                "nodes": [_node(f"n{n}", 300, 0, tiers, per_kg=100) for n in range(2)],
            }
            for m in range(2)
        ],
        "offers": [
            {"item": f"i{i}", "merchant": f"m{m}", "node": f"n{n}", "price": 500}
            for i in range(4)
            for m in range(2)
            for n in range(2)
        ],
    }


def limit_cart() -> dict[str, Any]:
    """Prices and weights near the service's limit (``MONEY_LIMIT``), every sum int64."""
    price = MONEY_LIMIT // 16
    return {
        "items": [
            {"id": "a", "quantity": 2, "weight_g": 10**15},
            {"id": "b", "quantity": 1, "weight_g": 3},
        ],
        "merchants": [
            {
                "id": "m",
                "free_over": 4 * price,
                "discount": {"min_units": 3, "basis_points": 9999},
                "nodes": [
                    _node("p", price // 8, price // 16, ((10**15, price // 32),), per_kg=1),
                    _node("q", price // 4),
                ],
            },
            {"id": "n", "nodes": [_node("only", price // 2)]},
        ],
        "offers": [
            {"item": "a", "merchant": "m", "node": "p", "price": price},
            {"item": "a", "merchant": "m", "node": "q", "price": price - 1},
            {"item": "a", "merchant": "n", "node": "only", "price": price - 7},
            {"item": "b", "merchant": "m", "node": "q", "price": price // 3},
            {"item": "b", "merchant": "n", "node": "only", "price": 1},
        ],
    }
