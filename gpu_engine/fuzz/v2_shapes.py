"""Fuzz carts of pricing contract version 2 (spec JSON), at the extremes of its rules.

Where :mod:`gpu_engine.fuzz.v2_carts` draws plausible carts, these go to the edges: 1-3 nodes
a merchant (and version 1 merchants mixed in), 0, 1 or many weight tiers (``up_to_g`` 0, fees
that fall, ``per_kg_over`` 0 or huge), parcels weighing exactly a tier's edge, a gram over it or
whole kilos past the last tier, stock one unit short at one node and enough at another,
thresholds only two nodes of one merchant reach together, discounts of 0/1/9999/10000 basis
points, money from a cent to just under the service's limit (one cart in ten of that shape one
step past it, refused), 3-120 lines, odd ids. Size classes as for version 1: ``small`` carts
(at most :data:`SMALL_ASSIGNMENTS` assignments) are brute-forced, ``medium`` ones decided by
the exact routes agreeing, ``large`` ones checked without an optimum.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from gpu_engine.fuzz import v2_edits as edits
from gpu_engine.fuzz.carts import Cart, _ids

SMALL_ASSIGNMENTS = 20_000  # the brute force's reach (runner's max_assignments)
MEDIUM_ASSIGNMENTS = 2_000_000  # well inside an unbudgeted full search's reach on version 2
_EDGES = (0, 1, 500, 999, 1000, 2000, 5000, 10_000, 31_500)


def _tiers(rng: random.Random, scale: int) -> dict[str, Any]:
    """No tiers (absent, null or []), one, or many; the first edge sometimes 0; fees rising,
    flat or falling; ``per_kg_over`` absent, 0, a cent or far above the fees."""
    style = rng.random()
    if style < 0.25:
        return rng.choice([{}, {"weight_tiers": None}, {"weight_tiers": []}])
    count = 1 if style < 0.45 else rng.randint(2, 6)
    edges = sorted(set(rng.sample((*_EDGES, rng.randint(2, 40_000)), count)))
    fees = [
        rng.choice([0, 1, scale // 2, scale, 3 * scale, rng.randint(0, 2 * scale)]) for _ in edges
    ]
    if rng.random() < 0.5:
        fees.sort(reverse=rng.random() < 0.3)  # rising, or falling (the spec allows it)
    rate: dict[str, Any] = {
        "weight_tiers": [{"up_to_g": e, "fee": f} for e, f in zip(edges, fees, strict=True)]
    }
    per_kg = rng.choice([None, 0, 0, 1, scale // 10, scale, 50 * scale])
    if per_kg is not None:
        rate["per_kg_over"] = per_kg
    return rate


def _rate(rng: random.Random, scale: int) -> dict[str, Any]:
    base = rng.choice([0, 1, scale // 10, scale, 3 * scale, rng.randint(0, 2 * scale)])
    per = rng.choice([0, 0, 1, base + 1, rng.randint(0, scale)])
    return {"base_fee": base, "per_extra_unit": per, **_tiers(rng, scale)}


def _terms(rng: random.Random, scale: int) -> tuple[int | None, dict[str, int] | None]:
    free_over = rng.choice(
        [
            None,
            None,
            0,
            1,
            scale,
            max(0, 3 * scale + rng.choice([-1, 0, 1])),
            rng.randint(0, 8 * scale),
        ]
    )
    discount = None
    if rng.random() < 0.6:
        discount = {
            "min_units": rng.choice([1, 1, 2, 3, rng.randint(1, 8)]),
            "basis_points": rng.choice([0, 1, 9999, 10_000, rng.randint(0, 10_000)]),
        }
    return free_over, discount


def _node_ids(rng: random.Random, merchant_id: str, count: int) -> list[str]:
    """Plain ``n0``... (the same names at every merchant), or odd: the merchant's own id,
    unicode, long."""
    style = rng.random()
    if style < 0.6:
        return [f"n{k}" for k in range(count)]
    if style < 0.75:
        return [merchant_id] + [f"{merchant_id}#{k}" for k in range(1, count)]
    if style < 0.9:
        return [f"Lager ü {k} ✓" for k in range(count)]
    return [f"{k}" + "w" * rng.randint(0, 120) for k in range(count)]


def _merchant(rng: random.Random, mid: str, scale: int, max_nodes: int, v1: bool) -> dict[str, Any]:
    free_over, discount = _terms(rng, scale)
    if v1:  # version 1, as the spec's "Version 1 input"
        shipping = _rate(rng, scale)
        shipping = {"base_fee": shipping["base_fee"], "per_extra_unit": shipping["per_extra_unit"]}
        return {"id": mid, "shipping": {**shipping, "free_over": free_over}, "discount": discount}
    count = rng.randint(1, max_nodes)
    nodes = [{"id": nid, "shipping": _rate(rng, scale)} for nid in _node_ids(rng, mid, count)]
    merchant: dict[str, Any] = {"id": mid, "nodes": nodes}
    if free_over is not None or rng.random() < 0.5:
        merchant["free_over"] = free_over
    if discount is not None or rng.random() < 0.5:
        merchant["discount"] = discount
    return merchant


def _weight(rng: random.Random, big: bool) -> int | None:
    if big:
        return rng.choice([0, 12_500, 10**6, rng.randint(0, 10**5)])
    return rng.choice([None, 0, 0, 1, 250, 999, 1000, 1001, rng.randint(0, 5000)])


def _stock(rng: random.Random, quantity: int) -> int | None:
    return rng.choice([None, None, 0, quantity - 1, quantity, quantity + 1])


def _build(
    rng: random.Random,
    n_lines: int,
    n_merchants: int,
    *,
    scale: int,
    sellers: tuple[int, int] = (1, 3),
    max_nodes: int = 3,
    v1_share: float = 0.2,
    big: bool = False,
) -> Cart:
    """Lines offered by 1-3 merchants each, at one or more of each seller's nodes, at the same
    price or a cent apart; one offer a line keeps the stock for it."""
    item_ids = _ids(rng, "i", n_lines)
    merchant_ids = _ids(rng, "m", n_merchants)
    merchants = [
        _merchant(rng, mid, scale, max_nodes, rng.random() < v1_share) for mid in merchant_ids
    ]
    items, offers = [], []
    for item_id in item_ids:
        quantity = rng.choice([1, 1, 1, 2, 3, rng.randint(1, 12)])
        if big:
            quantity = rng.choice([quantity, 10**3, 10**6])
        item: dict[str, Any] = {"id": item_id, "quantity": quantity}
        grams = _weight(rng, big)
        if grams is not None:
            item["weight_g"] = grams
        items.append(item)
        list_price = rng.choice([0, 1, scale, rng.randint(0, 2 * scale)])
        line_offers = []
        for merchant in rng.sample(merchants, min(n_merchants, rng.randint(*sellers))):
            price = rng.choice([list_price, list_price + 1, rng.randint(0, 2 * scale)])
            nodes = edits.nodes_of(merchant)
            for node in rng.sample(nodes, rng.randint(1, len(nodes))):
                offer = {"item": item_id, "merchant": merchant["id"]}
                if node is not None:
                    offer["node"] = node
                node_price = price if rng.random() < 0.6 else max(0, price + rng.choice([1, -1]))
                offer.update(price=node_price, stock=_stock(rng, quantity))
                if offer["stock"] is None and rng.random() < 0.3:
                    del offer["stock"]  # absent: unlimited
                line_offers.append(offer)
        keeper = rng.choice(line_offers)
        keeper["stock"] = rng.choice([None, quantity])
        offers += line_offers
    if rng.random() < 0.5:
        rng.shuffle(offers)
    return {"items": items, "merchants": merchants, "offers": offers}


# --- shapes: rng -> cart ---------------------------------------------------------------------


def _scale(rng: random.Random) -> int:
    return rng.choice([1, 10, 100, 1000, 10_000])


def _small(rng: random.Random, **kwargs: Any) -> Cart:
    return _build(rng, rng.randint(3, 7), rng.randint(1, 5), scale=_scale(rng), **kwargs)


def extremes(rng: random.Random) -> Cart:
    """3-7 lines, every rule (tiers, nodes, terms) drawn from its extremes."""
    return _small(rng)


def weight_edges(rng: random.Random) -> Cart:
    """Parcels weighing a tier's edge, a gram either side, or whole kilos past the last."""
    cart = _small(rng, v1_share=0.0)
    edits.weights_at_edges(rng, cart)
    return cart


def split_threshold(rng: random.Random) -> Cart:
    """A threshold (and a discount) only two nodes of one merchant reach together."""
    cart = _build(rng, rng.randint(3, 7), rng.randint(1, 4), scale=_scale(rng), v1_share=0.0)
    edits.split_threshold(rng, cart)
    return cart


def node_stock(rng: random.Random) -> Cart:
    """A line one unit short at one node of a merchant and just enough at another."""
    cart = _small(rng, sellers=(1, 2), v1_share=0.1)
    edits.stock_across_nodes(rng, cart)
    return cart


def thresholds(rng: random.Random) -> Cart:
    """Thresholds a cent either side of what some of a merchant's lines reach."""
    cart = _small(rng)
    edits.thresholds_at_subsets(rng, cart)
    return cart


def zero_money(rng: random.Random) -> Cart:
    """Zero prices and fees, thresholds of 0, 100% discounts: plateaus of equal totals."""
    cart = _build(rng, rng.randint(3, 7), rng.randint(1, 4), scale=rng.choice([0, 1]))
    for merchant in cart["merchants"]:
        if rng.random() < 0.5:
            merchant["discount"] = {"min_units": rng.randint(1, 3), "basis_points": 10_000}
    return cart


def mixed_v1(rng: random.Random) -> Cart:
    """Version 1 and version 2 merchants half and half in one cart."""
    cart = _small(rng, v1_share=0.5)
    if rng.random() < 0.5:
        edits.thresholds_at_subsets(rng, cart)
    return cart


def huge(rng: random.Random) -> Cart:
    """Up to 1e6 units a line and 1e6 g a unit: parcels of tons, per-kg fees on them."""
    return _build(
        rng, rng.randint(3, 6), rng.randint(1, 4), scale=rng.choice([1, 10, 1000]), big=True
    )


def highs_band(rng: random.Random) -> Cart:
    """Money of about 1e6..1e9 cents a merchant, where HiGHS's tolerances bite."""
    scale = int(10 ** rng.uniform(4.5, 8.0))
    cart = _build(rng, rng.randint(3, 7), rng.randint(2, 5), scale=scale)
    edits.thresholds_at_subsets(rng, cart)
    return cart


def near_limit(rng: random.Random) -> Cart:
    """Every amount scaled to just under the service's limit; one in ten just past it."""
    cart = _build(rng, rng.randint(3, 6), rng.randint(1, 4), scale=_scale(rng))
    if rng.random() < 0.5:
        edits.thresholds_at_subsets(rng, cart)
    edits.keep_eligible(rng, cart)
    edits.trim(rng, cart, SMALL_ASSIGNMENTS)  # before scaling: the bound counts eligible offers
    edits.to_limit(rng, cart, over=rng.random() < 0.1)
    return cart


def medium(rng: random.Random) -> Cart:
    """8-20 lines, trimmed to at most :data:`MEDIUM_ASSIGNMENTS`: the exact routes decide."""
    cart = _build(
        rng, rng.randint(8, 20), rng.randint(2, 8), scale=_scale(rng), sellers=(1, 2), max_nodes=2
    )
    if rng.random() < 0.5:
        edits.thresholds_at_subsets(rng, cart)
    if rng.random() < 0.5:
        edits.weights_at_edges(rng, cart)
    return cart


def large(rng: random.Random) -> Cart:
    """25-120 lines, up to 40 merchants: past exhaustion, checked without an optimum."""
    scale = rng.choice([100, 1000, int(10 ** rng.uniform(5.0, 8.0))])
    cart = _build(rng, rng.randint(25, 120), rng.randint(8, 40), scale=scale, sellers=(1, 4))
    if rng.random() < 0.5:
        edits.thresholds_at_subsets(rng, cart)
    return cart


def flat(rng: random.Random) -> Cart:
    """3-7 lines whose merchants the flat route takes (:func:`v2_edits.flatten`): 1-3 nodes,
    weight fees constant or per whole kilogram, rules out of reach or always met; one cart in
    five with its money scaled to just under the service's limit (scaling keeps it flat)."""
    cart = _small(rng, v1_share=0.1)
    edits.flatten(rng, cart)
    if rng.random() < 0.2:
        edits.keep_eligible(rng, cart)
        edits.trim(rng, cart, SMALL_ASSIGNMENTS)
        edits.to_limit(rng, cart, over=False)
    return cart


def flat_medium(rng: random.Random) -> Cart:
    """8-20 flat lines (as :func:`flat`), trimmed to at most :data:`MEDIUM_ASSIGNMENTS`."""
    cart = _build(
        rng, rng.randint(8, 20), rng.randint(2, 8), scale=_scale(rng), sellers=(1, 3), max_nodes=3
    )
    edits.flatten(rng, cart)
    return cart


Shape = Callable[[random.Random], Cart]
# name -> (shape, weight, assignment cap: None leaves the cart as drawn).
V2_SHAPES: dict[str, tuple[Shape, int, int | None]] = {
    "v2-extremes": (extremes, 10, SMALL_ASSIGNMENTS),
    "v2-weight-edges": (weight_edges, 12, SMALL_ASSIGNMENTS),
    "v2-split-threshold": (split_threshold, 10, SMALL_ASSIGNMENTS),
    "v2-node-stock": (node_stock, 8, SMALL_ASSIGNMENTS),
    "v2-thresholds": (thresholds, 8, SMALL_ASSIGNMENTS),
    "v2-zero-money": (zero_money, 4, SMALL_ASSIGNMENTS),
    "v2-mixed-v1": (mixed_v1, 8, SMALL_ASSIGNMENTS),
    "v2-huge": (huge, 4, SMALL_ASSIGNMENTS),
    "v2-highs-band": (highs_band, 6, SMALL_ASSIGNMENTS),
    "v2-near-limit": (near_limit, 6, SMALL_ASSIGNMENTS),
    "v2-medium": (medium, 10, MEDIUM_ASSIGNMENTS),
    "v2-large": (large, 6, None),
    "v2-flat": (flat, 8, SMALL_ASSIGNMENTS),
    "v2-flat-medium": (flat_medium, 4, MEDIUM_ASSIGNMENTS),
}


def v2_shape(name: str, rng: random.Random) -> Cart:
    """Cart of shape ``name`` drawn from ``rng``: each line keeps an eligible offer and the
    shape's size class holds."""
    shape, _, cap = V2_SHAPES[name]
    cart = shape(rng)
    edits.keep_eligible(rng, cart)
    if cap is not None:
        edits.trim(rng, cart, cap)
    return cart
