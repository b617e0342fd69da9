"""The fuzzer's own oracle: cart pricing written plainly from ``shared/spec/cart-pricing.md``
(version 1 carts, and version 2's nodes and parcels by weight) and a brute force over every
assignment.

Deliberately shares nothing with the engine (not :mod:`gpu_engine.pricing`, not
:mod:`gpu_engine.reference`): a bug copied into both sides would agree with itself. Python ints
throughout, so no amount overflows.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

Cart = Mapping[str, Any]

BASIS = 10_000


class InvalidAssignment(ValueError):
    """An assignment that misses a line, names an unknown line or merchant, or picks an
    ineligible offer."""


def eligible_merchants(cart: Cart) -> dict[str, list[str]]:
    """Line id -> the merchants whose offer has the stock for the whole line, in offer order."""
    quantity = {item["id"]: item["quantity"] for item in cart["items"]}
    eligible: dict[str, list[str]] = {item["id"]: [] for item in cart["items"]}
    for offer in cart["offers"]:
        stock = offer.get("stock")
        if stock is None or stock >= quantity[offer["item"]]:
            eligible[offer["item"]].append(offer["merchant"])
    return eligible


def assignment_count(cart: Cart) -> int:
    """The spec's complexity: the product over lines of their eligible offers."""
    return math.prod(len(ms) for ms in eligible_merchants(cart).values())


def merchant_total(merchant: Mapping[str, Any], subtotal: int, units: int) -> int:
    """``cost(m)`` of the spec for a merchant shipping ``units`` units worth ``subtotal``."""
    if units == 0:
        return 0
    discount = 0
    rule = merchant.get("discount")
    if rule is not None and units >= rule["min_units"]:
        discount = subtotal * rule["basis_points"] // BASIS
    goods = subtotal - discount
    shipping = merchant["shipping"]
    free_over = shipping.get("free_over")
    if free_over is not None and goods >= free_over:
        return goods
    return goods + shipping["base_fee"] + shipping["per_extra_unit"] * (units - 1)


def cart_total(cart: Cart, assignment: Mapping[str, str]) -> int:
    """Total of ``assignment`` (line id -> merchant id); :class:`InvalidAssignment` when it is
    not an assignment of this cart."""
    eligible = eligible_merchants(cart)
    if set(assignment) != set(eligible):
        missing = sorted(set(eligible) ^ set(assignment))
        raise InvalidAssignment(f"lines assigned do not match the cart's: {missing[:5]}")
    price = {(o["item"], o["merchant"]): o["price"] for o in cart["offers"]}
    quantity = {item["id"]: item["quantity"] for item in cart["items"]}
    subtotal: dict[str, int] = {}
    units: dict[str, int] = {}
    for line, merchant in assignment.items():
        if merchant not in eligible[line]:
            raise InvalidAssignment(f"line {line!r}: merchant {merchant!r} has no eligible offer")
        subtotal[merchant] = subtotal.get(merchant, 0) + quantity[line] * price[(line, merchant)]
        units[merchant] = units.get(merchant, 0) + quantity[line]
    merchants = {m["id"]: m for m in cart["merchants"]}
    return sum(merchant_total(merchants[m], subtotal[m], units[m]) for m in subtotal)


def brute_force(cart: Cart) -> tuple[int, dict[str, str]]:
    """The optimum and one assignment reaching it, by pricing every assignment. The caller
    bounds :func:`assignment_count`; a line without an eligible offer raises ValueError."""
    eligible = eligible_merchants(cart)
    lines = list(eligible)
    if any(not eligible[line] for line in lines):
        raise ValueError("a line has no eligible offer")
    quantity = {item["id"]: item["quantity"] for item in cart["items"]}
    price = {(o["item"], o["merchant"]): o["price"] for o in cart["offers"]}
    merchants = {m["id"]: m for m in cart["merchants"]}
    best: tuple[int, tuple[str, ...]] | None = None
    for picks in itertools.product(*(eligible[line] for line in lines)):
        subtotal: dict[str, int] = {}
        units: dict[str, int] = {}
        for line, merchant in zip(lines, picks, strict=True):
            subtotal[merchant] = (
                subtotal.get(merchant, 0) + quantity[line] * price[(line, merchant)]
            )
            units[merchant] = units.get(merchant, 0) + quantity[line]
        total = sum(merchant_total(merchants[m], subtotal[m], units[m]) for m in subtotal)
        if best is None or total < best[0]:
            best = (total, picks)
    assert best is not None, "every line has an offer, so there is an assignment"
    return best[0], dict(zip(lines, best[1], strict=True))


# --- version 2: merchants with fulfillment nodes, parcels by weight ---------------------------


def is_v2(cart: Cart) -> bool:
    """Written with version 2's fields: a merchant with ``nodes`` or an item with a weight."""
    return any("nodes" in m for m in cart["merchants"]) or any(
        "weight_g" in item for item in cart["items"]
    )


def _merchant_terms(merchant: Mapping[str, Any]) -> tuple[Any, Any, dict[str, Mapping]]:
    """(free_over, discount, node id -> parcel rate) of a merchant written either way."""
    if "nodes" in merchant:
        nodes = {node["id"]: node["shipping"] for node in merchant["nodes"]}
        return merchant.get("free_over"), merchant.get("discount"), nodes
    shipping = merchant["shipping"]
    return shipping.get("free_over"), merchant.get("discount"), {merchant["id"]: shipping}


def is_simple(cart: Cart) -> bool:
    """Every merchant one node and no weight tiers: version 1's pricing holds, so every route
    must take the cart (a FulfillmentUnsupported refusal of it is a defect)."""
    for merchant in cart["merchants"]:
        _, _, nodes = _merchant_terms(merchant)
        if len(nodes) != 1 or any(rate.get("weight_tiers") for rate in nodes.values()):
            return False
    return True


def eligible_offers(cart: Cart) -> dict[str, list[tuple[str, str]]]:
    """Line id -> the (merchant, node) pairs whose offer stocks the whole line, in offer order
    (a version 1 merchant's node is named as the merchant)."""
    quantity = {item["id"]: item["quantity"] for item in cart["items"]}
    eligible: dict[str, list[tuple[str, str]]] = {item["id"]: [] for item in cart["items"]}
    for offer in cart["offers"]:
        stock = offer.get("stock")
        if stock is None or stock >= quantity[offer["item"]]:
            node = offer.get("node", offer["merchant"])
            eligible[offer["item"]].append((offer["merchant"], node))
    return eligible


def weight_fee(rate: Mapping[str, Any], grams: int) -> int:
    """The spec's ``weight_fee(w)`` of one node's parcel rate."""
    tiers = rate.get("weight_tiers") or []
    if not tiers:
        return 0
    for tier in tiers:
        if grams <= tier["up_to_g"]:
            return tier["fee"]
    kilos = -(-(grams - tiers[-1]["up_to_g"]) // 1000)  # ceil, in integers (no float)
    return tiers[-1]["fee"] + (rate.get("per_kg_over") or 0) * kilos


class _V2Cart:
    """A version 2 cart read once for pricing many assignments of it."""

    def __init__(self, cart: Cart) -> None:
        self.quantity = {item["id"]: item["quantity"] for item in cart["items"]}
        self.grams = {item["id"]: item.get("weight_g") or 0 for item in cart["items"]}
        self.terms = {m["id"]: _merchant_terms(m) for m in cart["merchants"]}
        self.price = {
            (o["item"], o["merchant"], o.get("node", o["merchant"])): o["price"]
            for o in cart["offers"]
        }
        self.eligible = eligible_offers(cart)

    def total(self, picks: Mapping[str, tuple[str, str]]) -> int:
        subtotal: dict[str, int] = {}
        units: dict[str, int] = {}
        parcels: dict[tuple[str, str], list[int]] = {}
        for line, (merchant, node) in picks.items():
            q = self.quantity[line]
            subtotal[merchant] = subtotal.get(merchant, 0) + q * self.price[(line, merchant, node)]
            units[merchant] = units.get(merchant, 0) + q
            parcel = parcels.setdefault((merchant, node), [0, 0])
            parcel[0] += q
            parcel[1] += q * self.grams[line]
        total = 0
        for merchant, amount in subtotal.items():
            free_over, rule, rates = self.terms[merchant]
            if rule is not None and units[merchant] >= rule["min_units"]:
                amount -= amount * rule["basis_points"] // BASIS
            total += amount
            if free_over is not None and amount >= free_over:
                continue
            for (owner, node), (n_units, grams) in parcels.items():
                if owner == merchant:
                    rate = rates[node]
                    total += rate["base_fee"] + rate["per_extra_unit"] * (n_units - 1)
                    total += weight_fee(rate, grams)
        return total


def cart_total_v2(cart: Cart, assignment: Mapping[str, str], nodes: Mapping[str, str]) -> int:
    """Total of an answer (line id -> merchant id, line id -> node id), either version;
    :class:`InvalidAssignment` when it is not an assignment of this cart."""
    priced = _V2Cart(cart)
    if set(assignment) != set(priced.eligible) or set(nodes) != set(priced.eligible):
        wrong = sorted((set(priced.eligible) ^ set(assignment)) | (set(assignment) ^ set(nodes)))
        raise InvalidAssignment(f"lines assigned do not match the cart's: {wrong[:5]}")
    picks = {line: (assignment[line], nodes[line]) for line in assignment}
    for line, pick in picks.items():
        if pick not in priced.eligible[line]:
            raise InvalidAssignment(f"line {line!r}: {pick!r} has no eligible offer")
    return priced.total(picks)


def brute_force_v2(cart: Cart) -> tuple[int, dict[str, tuple[str, str]]]:
    """The optimum and one (merchant, node) assignment reaching it, by pricing every
    assignment (the caller bounds their count)."""
    priced = _V2Cart(cart)
    lines = list(priced.eligible)
    if any(not priced.eligible[line] for line in lines):
        raise ValueError("a line has no eligible offer")
    best: tuple[int, dict[str, tuple[str, str]]] | None = None
    for picks in itertools.product(*(priced.eligible[line] for line in lines)):
        assignment = dict(zip(lines, picks, strict=True))
        total = priced.total(assignment)
        if best is None or total < best[0]:
            best = (total, assignment)
    assert best is not None, "every line has an offer, so there is an assignment"
    return best
