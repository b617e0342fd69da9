"""Pure-Python reference pricer and brute-force solver, written straight from the spec.

Slow on purpose and independent of the njit code (no shared helpers, plain dicts), so tests can
hold every fast solver against it. Only for tiny carts.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any


def reference_cost(problem: Mapping[str, Any], assignment: Mapping[str, str]) -> int:
    """Total cost of ``assignment`` (line id -> merchant id) for a spec-format problem dict."""
    quantity = {item["id"]: item["quantity"] for item in problem["items"]}
    price = {(o["item"], o["merchant"]): o["price"] for o in problem["offers"]}
    total = 0
    for merchant in problem["merchants"]:
        lines = [line for line, m in assignment.items() if m == merchant["id"]]
        if not lines:
            continue
        subtotal = sum(quantity[line] * price[(line, merchant["id"])] for line in lines)
        units = sum(quantity[line] for line in lines)
        discount = 0
        rule = merchant.get("discount")
        if rule is not None and units >= rule["min_units"]:
            discount = subtotal * rule["basis_points"] // 10000
        goods = subtotal - discount
        shipping_rule = merchant["shipping"]
        free_over = shipping_rule.get("free_over")
        if free_over is not None and goods >= free_over:
            shipping = 0
        else:
            shipping = shipping_rule["base_fee"] + shipping_rule["per_extra_unit"] * (units - 1)
        total += goods + shipping
    return total


def reference_eligible(problem: Mapping[str, Any]) -> dict[str, list[str]]:
    """Line id -> merchants with an eligible offer (stock null or >= quantity)."""
    quantity = {item["id"]: item["quantity"] for item in problem["items"]}
    eligible: dict[str, list[str]] = {item["id"]: [] for item in problem["items"]}
    for offer in problem["offers"]:
        stock = offer.get("stock")
        if stock is None or stock >= quantity[offer["item"]]:
            eligible[offer["item"]].append(offer["merchant"])
    return eligible


def reference_brute_force(problem: Mapping[str, Any]) -> tuple[int, dict[str, str]]:
    """Cheapest (total, assignment) by trying every assignment. Tiny carts only."""
    eligible = reference_eligible(problem)
    lines = list(eligible)
    best: tuple[int, dict[str, str]] | None = None
    for merchants in itertools.product(*(eligible[line] for line in lines)):
        assignment = dict(zip(lines, merchants, strict=True))
        cost = reference_cost(problem, assignment)
        if best is None or cost < best[0]:
            best = (cost, assignment)
    if best is None:
        raise ValueError("some line has no eligible offer")
    return best
