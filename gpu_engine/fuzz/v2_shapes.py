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

import math
import random
from collections.abc import Callable
from typing import Any

from gpu_engine.fuzz.carts import INT64_MAX, MONEY_LIMIT, Cart, _ids
from gpu_engine.fuzz.reference import eligible_offers

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
    edges = sorted(rng.sample((*_EDGES, rng.randint(2, 40_000)), count))
    edges = sorted(set(edges))
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


def _nodes_of(merchant: dict[str, Any]) -> list[str | None]:
    """Node ids to offer from (None: a version 1 merchant, whose offers name no node)."""
    if "nodes" not in merchant:
        return [None]
    return [node["id"] for node in merchant["nodes"]]


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
            nodes = _nodes_of(merchant)
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


# --- edits that put a cart on an edge --------------------------------------------------------


def _trim(rng: random.Random, cart: Cart, limit: int) -> None:
    """Make offers one unit short (never a line's last eligible one) until the cart has at most
    ``limit`` assignments: the size class holds, and short offers abound."""
    quantity = {item["id"]: item["quantity"] for item in cart["items"]}
    while True:
        eligible = eligible_offers(cart)
        if math.prod(len(v) for v in eligible.values()) <= limit:
            return
        line = rng.choice([ln for ln, picks in eligible.items() if len(picks) > 1])
        merchant, node = rng.choice(eligible[line])
        for offer in cart["offers"]:
            if (offer["item"], offer["merchant"], offer.get("node", offer["merchant"])) == (
                line,
                merchant,
                node,
            ):
                offer["stock"] = quantity[line] - 1


def _node_rates(cart: Cart) -> list[tuple[dict[str, Any], str, dict[str, Any]]]:
    """(merchant, node id, parcel rate) of every version 2 node with tiers."""
    found = []
    for merchant in cart["merchants"]:
        for node in merchant.get("nodes", []):
            if node["shipping"].get("weight_tiers"):
                found.append((merchant, node["id"], node["shipping"]))
    return found


def _weights_at_edges(rng: random.Random, cart: Cart) -> None:
    """Weigh some parcels exactly at a tier's edge, a gram either side, or whole kilos (and a
    gram) past the last tier: one line's weight set so a node's lines sum to the target."""
    items = {item["id"]: item for item in cart["items"]}
    for merchant, node, rate in _node_rates(cart):
        if rng.random() < 0.3:
            continue
        lines = [
            o["item"]
            for o in cart["offers"]
            if o["merchant"] == merchant["id"] and o.get("node") == node
        ]
        if not lines:
            continue
        tiers = rate["weight_tiers"]
        last = tiers[-1]["up_to_g"]
        target = rng.choice(
            [
                rng.choice(tiers)["up_to_g"] + rng.choice([0, 0, 1, -1]),
                last + 1000 * rng.randint(1, 5) + rng.choice([0, 0, 1]),
            ]
        )
        chosen = rng.sample(lines, rng.randint(1, min(3, len(lines))))
        adjust = min(chosen, key=lambda ln: items[ln]["quantity"])
        rest = sum(
            items[ln]["quantity"] * (items[ln].get("weight_g") or 0)
            for ln in chosen
            if ln != adjust
        )
        q = items[adjust]["quantity"]
        if target - rest >= 0 and (target - rest) % q == 0:
            items[adjust]["weight_g"] = (target - rest) // q
        elif target >= 0 and target % q == 0:
            items[adjust]["weight_g"] = target // q  # the line alone on the edge


def _goods(cart: Cart, merchant: dict[str, Any], picks: list[dict[str, Any]]) -> int:
    quantity = {item["id"]: item["quantity"] for item in cart["items"]}
    goods = sum(quantity[o["item"]] * o["price"] for o in picks)
    rule = merchant.get("discount")
    units = sum(quantity[o["item"]] for o in picks)
    if rule is not None and units >= rule["min_units"]:
        goods -= goods * rule["basis_points"] // 10_000
    return goods


def _set_free_over(merchant: dict[str, Any], value: int | None) -> None:
    if "nodes" in merchant:
        merchant["free_over"] = value
    else:
        merchant["shipping"]["free_over"] = value


def _thresholds_at_subsets(rng: random.Random, cart: Cart) -> None:
    """Thresholds a cent either side of the goods of some of a merchant's offers (distinct
    lines, any nodes)."""
    for merchant in cart["merchants"]:
        mine = {o["item"]: o for o in cart["offers"] if o["merchant"] == merchant["id"]}
        if not mine or rng.random() < 0.3:
            continue
        picks = rng.sample(list(mine.values()), rng.randint(1, len(mine)))
        _set_free_over(merchant, max(0, _goods(cart, merchant, picks) + rng.choice([-1, 0, 1])))


def _split_threshold(rng: random.Random, cart: Cart) -> None:
    """A merchant with two nodes: one line stocked only at the first, another only at the
    second, the threshold (and the discount's units) met only by both together."""
    quantity = {item["id"]: item["quantity"] for item in cart["items"]}
    for merchant in cart["merchants"]:
        nodes = _nodes_of(merchant)
        if len(nodes) < 2 or len(cart["items"]) < 2:
            continue
        first, second = rng.sample(nodes, 2)
        a, b = rng.sample([item["id"] for item in cart["items"]], 2)
        picks = []
        for line, node in ((a, first), (b, second)):
            for offer in cart["offers"]:  # the merchant's other nodes one unit short
                if (offer["item"], offer["merchant"]) == (line, merchant["id"]) and offer[
                    "node"
                ] != node:
                    offer["stock"] = quantity[line] - 1
            offer = next(
                (
                    o
                    for o in cart["offers"]
                    if (o["item"], o["merchant"], o.get("node")) == (line, merchant["id"], node)
                ),
                None,
            )
            if offer is None:
                offer = {
                    "item": line,
                    "merchant": merchant["id"],
                    "node": node,
                    "price": rng.randint(1, 99),
                }
                cart["offers"].append(offer)
            offer["stock"] = rng.choice([None, quantity[line]])
            picks.append(offer)
        if rng.random() < 0.5:
            merchant["discount"] = {
                "min_units": quantity[a] + quantity[b],
                "basis_points": rng.choice([1, 9999, 10_000, 2500]),
            }
        goods = _goods(cart, merchant, picks)
        _set_free_over(merchant, max(0, goods + rng.choice([0, 0, -1, 1])))
        return


def _stock_across_nodes(rng: random.Random, cart: Cart) -> None:
    """Per line and merchant with several nodes: one node one unit short, another with exactly
    enough."""
    quantity = {item["id"]: item["quantity"] for item in cart["items"]}
    by_seller: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for offer in cart["offers"]:
        by_seller.setdefault((offer["item"], offer["merchant"]), []).append(offer)
    for (line, _), offers in by_seller.items():
        if len(offers) >= 2 and rng.random() < 0.7:
            short, enough = rng.sample(offers, 2)
            short["stock"], enough["stock"] = quantity[line] - 1, quantity[line]


def _keep_eligible(rng: random.Random, cart: Cart) -> None:
    """Every line keeps an eligible offer whatever the edits did (one made unlimited)."""
    for line, picks in eligible_offers(cart).items():
        if not picks:
            rng.choice([o for o in cart["offers"] if o["item"] == line])["stock"] = None


# --- money up to the service's limit ---------------------------------------------------------


def _rates_of(cart: Cart) -> list[dict[str, Any]]:
    rates = []
    for merchant in cart["merchants"]:
        if "nodes" in merchant:
            rates += [node["shipping"] for node in merchant["nodes"]]
        else:
            rates.append(merchant["shipping"])
    return rates


def engine_money_bound_v2(cart: Cart) -> int:
    """The worst-case total the engine checks against :data:`MONEY_LIMIT`, restated from the
    spec-format cart (``gpu_engine.problem.cart._check_money_bounds``): the dearest eligible
    offer per line, a parcel per line at the highest base fee and the dearest weight fee the
    whole cart's weight could cost at any node, extra units at the highest per-unit fee."""
    quantity = {item["id"]: item["quantity"] for item in cart["items"]}
    grams = sum(item["quantity"] * (item.get("weight_g") or 0) for item in cart["items"])
    dearest: dict[str, int] = {}
    for offer in cart["offers"]:
        stock = offer.get("stock")
        if stock is None or stock >= quantity[offer["item"]]:
            dearest[offer["item"]] = max(dearest.get(offer["item"], 0), offer["price"])
    units = sum(quantity.values())
    rates = _rates_of(cart)
    weight_fee = 0
    for rate in rates:
        tiers = rate.get("weight_tiers") or []
        if tiers:
            kilos = -(-max(0, grams - tiers[-1]["up_to_g"]) // 1000)
            fee = max(t["fee"] for t in tiers) + (rate.get("per_kg_over") or 0) * kilos
            weight_fee = max(weight_fee, fee)
    base = max(r["base_fee"] for r in rates)
    extra = max(r["per_extra_unit"] for r in rates)
    goods = sum(q * dearest.get(i, 0) for i, q in quantity.items())
    return goods + len(quantity) * (base + weight_fee) + extra * units + units


def _scale_money(cart: Cart, factor: int) -> None:
    for offer in cart["offers"]:
        offer["price"] *= factor
    for rate in _rates_of(cart):
        rate["base_fee"] *= factor
        rate["per_extra_unit"] *= factor
        for tier in rate.get("weight_tiers") or []:
            tier["fee"] *= factor
        if rate.get("per_kg_over"):  # counts only past the last tier: it may reach int64
            rate["per_kg_over"] = min(INT64_MAX, rate["per_kg_over"] * factor)
    for merchant in cart["merchants"]:
        holder = merchant if "nodes" in merchant else merchant["shipping"]
        if holder.get("free_over") is not None:  # the engine reads it as an int64
            holder["free_over"] = min(INT64_MAX, holder["free_over"] * factor)


def _to_limit(rng: random.Random, cart: Cart, *, over: bool) -> None:
    """Scale every amount so that :func:`engine_money_bound_v2` lands just under the limit
    (``over``: at or just past it, which the engine refuses)."""
    units = sum(item["quantity"] for item in cart["items"])
    if engine_money_bound_v2(cart) - units <= 0:
        for offer in cart["offers"]:
            offer["price"] = max(offer["price"], 1)
    linear = engine_money_bound_v2(cart) - units
    room = MONEY_LIMIT - 1 - units - rng.randint(0, 1000)
    factor = -(-(MONEY_LIMIT - units) // linear) if over else room // linear
    _scale_money(cart, max(1, factor))


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
    _weights_at_edges(rng, cart)
    return cart


def split_threshold(rng: random.Random) -> Cart:
    """A threshold (and a discount) only two nodes of one merchant reach together."""
    cart = _build(rng, rng.randint(3, 7), rng.randint(1, 4), scale=_scale(rng), v1_share=0.0)
    _split_threshold(rng, cart)
    return cart


def node_stock(rng: random.Random) -> Cart:
    """A line one unit short at one node of a merchant and just enough at another."""
    cart = _small(rng, sellers=(1, 2), v1_share=0.1)
    _stock_across_nodes(rng, cart)
    return cart


def thresholds(rng: random.Random) -> Cart:
    """Thresholds a cent either side of what some of a merchant's lines reach."""
    cart = _small(rng)
    _thresholds_at_subsets(rng, cart)
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
        _thresholds_at_subsets(rng, cart)
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
    _thresholds_at_subsets(rng, cart)
    return cart


def near_limit(rng: random.Random) -> Cart:
    """Every amount scaled to just under the service's limit; one in ten just past it."""
    cart = _build(rng, rng.randint(3, 6), rng.randint(1, 4), scale=_scale(rng))
    if rng.random() < 0.5:
        _thresholds_at_subsets(rng, cart)
    _keep_eligible(rng, cart)
    _to_limit(rng, cart, over=rng.random() < 0.1)
    return cart


def medium(rng: random.Random) -> Cart:
    """8-20 lines, trimmed to at most :data:`MEDIUM_ASSIGNMENTS`: the exact routes decide."""
    cart = _build(
        rng, rng.randint(8, 20), rng.randint(2, 8), scale=_scale(rng), sellers=(1, 2), max_nodes=2
    )
    if rng.random() < 0.5:
        _thresholds_at_subsets(rng, cart)
    if rng.random() < 0.5:
        _weights_at_edges(rng, cart)
    return cart


def large(rng: random.Random) -> Cart:
    """25-120 lines, up to 40 merchants: past exhaustion, checked without an optimum."""
    scale = rng.choice([100, 1000, int(10 ** rng.uniform(5.0, 8.0))])
    cart = _build(rng, rng.randint(25, 120), rng.randint(8, 40), scale=scale, sellers=(1, 4))
    if rng.random() < 0.5:
        _thresholds_at_subsets(rng, cart)
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
}


def v2_shape(name: str, rng: random.Random) -> Cart:
    """Cart of shape ``name`` drawn from ``rng``: each line keeps an eligible offer and the
    shape's size class holds."""
    shape, _, cap = V2_SHAPES[name]
    cart = shape(rng)
    _keep_eligible(rng, cart)
    if cap is not None:
        _trim(rng, cart, cap)
    return cart
