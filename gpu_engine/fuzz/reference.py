"""The fuzzer's own oracle: cart pricing written plainly from ``shared/spec/cart-pricing.md``
(version 1 carts, the ones the engine reads) and a brute force over every assignment.

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
