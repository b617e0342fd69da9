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


# --- version 2: nodes, parcels by weight -----------------------------------------------------


def _v2_merchants(problem: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Merchant id -> {"free_over", "discount", "nodes": {node id: shipping}}, version 1
    merchants read as the spec's "Version 1 input" says."""
    merchants = {}
    for merchant in problem["merchants"]:
        if "nodes" in merchant:
            nodes = {node["id"]: node["shipping"] for node in merchant["nodes"]}
            free_over = merchant.get("free_over")
        else:
            rule = merchant["shipping"]
            nodes = {merchant["id"]: rule}
            free_over = rule.get("free_over")
        merchants[merchant["id"]] = {
            "free_over": free_over,
            "discount": merchant.get("discount"),
            "nodes": nodes,
        }
    return merchants


def _offer_node(problem: Mapping[str, Any], offer: Mapping[str, Any]) -> str:
    if "node" in offer:
        return offer["node"]
    (node,) = _v2_merchants(problem)[offer["merchant"]]["nodes"]
    return node


def reference_weight_fee(shipping: Mapping[str, Any], weight: int) -> int:
    tiers = shipping.get("weight_tiers") or []
    if not tiers:
        return 0
    for tier in tiers:
        if weight <= tier["up_to_g"]:
            return tier["fee"]
    over = weight - tiers[-1]["up_to_g"]
    kilos = over // 1000 + (1 if over % 1000 else 0)
    return tiers[-1]["fee"] + shipping.get("per_kg_over", 0) * kilos


def reference_cost_v2(problem: Mapping[str, Any], assignment: Mapping[str, tuple[str, str]]) -> int:
    """Total cost of ``assignment`` (line id -> (merchant id, node id)) for a spec problem of
    either version."""
    quantity = {item["id"]: item["quantity"] for item in problem["items"]}
    weight = {item["id"]: item.get("weight_g", 0) for item in problem["items"]}
    price = {
        (o["item"], o["merchant"], _offer_node(problem, o)): o["price"] for o in problem["offers"]
    }
    total = 0
    for merchant_id, merchant in _v2_merchants(problem).items():
        lines = [line for line, (m, _) in assignment.items() if m == merchant_id]
        if not lines:
            continue
        subtotal = sum(quantity[ln] * price[(ln, *assignment[ln])] for ln in lines)
        units = sum(quantity[ln] for ln in lines)
        rule = merchant["discount"]
        discount = 0
        if rule is not None and units >= rule["min_units"]:
            discount = subtotal * rule["basis_points"] // 10000
        goods = subtotal - discount
        if merchant["free_over"] is not None and goods >= merchant["free_over"]:
            total += goods
            continue
        shipping = 0
        for node_id, rate in merchant["nodes"].items():
            node_lines = [ln for ln in lines if assignment[ln][1] == node_id]
            if not node_lines:
                continue
            node_units = sum(quantity[ln] for ln in node_lines)
            node_weight = sum(quantity[ln] * weight[ln] for ln in node_lines)
            shipping += rate["base_fee"] + rate["per_extra_unit"] * (node_units - 1)
            shipping += reference_weight_fee(rate, node_weight)
        total += goods + shipping
    return total


def reference_brute_force_v2(
    problem: Mapping[str, Any],
) -> tuple[int, dict[str, tuple[str, str]]]:
    """Cheapest (total, assignment line -> (merchant, node)) by trying every assignment."""
    quantity = {item["id"]: item["quantity"] for item in problem["items"]}
    eligible: dict[str, list[tuple[str, str]]] = {item["id"]: [] for item in problem["items"]}
    for offer in problem["offers"]:
        stock = offer.get("stock")
        if stock is None or stock >= quantity[offer["item"]]:
            eligible[offer["item"]].append((offer["merchant"], _offer_node(problem, offer)))
    lines = list(eligible)
    best: tuple[int, dict[str, tuple[str, str]]] | None = None
    for picks in itertools.product(*(eligible[line] for line in lines)):
        assignment = dict(zip(lines, picks, strict=True))
        cost = reference_cost_v2(problem, assignment)
        if best is None or cost < best[0]:
            best = (cost, assignment)
    if best is None:
        raise ValueError("some line has no eligible offer")
    return best
