"""Edits that put a version 2 fuzz cart on an edge of the pricing rules (weights on a tier's
edge, thresholds a cent either side, stock one unit short at one node), keep it valid (every
line an eligible offer) and in its size class, or scale its money up to the service's limit.
"""

from __future__ import annotations

import math
import random
from typing import Any

from gpu_engine.fuzz.carts import INT64_MAX, MONEY_LIMIT, Cart
from gpu_engine.fuzz.reference import eligible_offers


def nodes_of(merchant: dict[str, Any]) -> list[str | None]:
    """Node ids to offer from (None: a version 1 merchant, whose offers name no node)."""
    if "nodes" not in merchant:
        return [None]
    return [node["id"] for node in merchant["nodes"]]


# --- edits that put a cart on an edge --------------------------------------------------------


def trim(rng: random.Random, cart: Cart, limit: int) -> None:
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


def weights_at_edges(rng: random.Random, cart: Cart) -> None:
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


def thresholds_at_subsets(rng: random.Random, cart: Cart) -> None:
    """Thresholds a cent either side of the goods of some of a merchant's offers (distinct
    lines, any nodes)."""
    for merchant in cart["merchants"]:
        mine = {o["item"]: o for o in cart["offers"] if o["merchant"] == merchant["id"]}
        if not mine or rng.random() < 0.3:
            continue
        picks = rng.sample(list(mine.values()), rng.randint(1, len(mine)))
        _set_free_over(merchant, max(0, _goods(cart, merchant, picks) + rng.choice([-1, 0, 1])))


def split_threshold(rng: random.Random, cart: Cart) -> None:
    """A merchant with two nodes sells two lines, one stocked only at its first node and the
    other only at its second (its other offers one unit short); its threshold, and its
    discount's units, are met only by both lines together, so only across the two nodes."""
    quantity = {item["id"]: item["quantity"] for item in cart["items"]}
    merchant = next((m for m in cart["merchants"] if len(nodes_of(m)) >= 2), None)
    if merchant is None or len(quantity) < 2:
        return
    first, second = rng.sample(nodes_of(merchant), 2)
    a, b = rng.sample(list(quantity), 2)
    keep = {(a, first), (b, second)}
    for offer in cart["offers"]:
        if offer["merchant"] == merchant["id"] and (offer["item"], offer["node"]) not in keep:
            offer["stock"] = quantity[offer["item"]] - 1
    # Both lines' goods about the same amount, so neither alone reaches what both do.
    amounts = [quantity[a] * 4 + 4, quantity[b] * 4 + 4]
    amounts += [quantity[o["item"]] * o["price"] for o in cart["offers"] if o["item"] in (a, b)]
    each = max(amounts)
    picks = []
    for line, node in sorted(keep):
        offer = next(
            (
                o
                for o in cart["offers"]
                if (o["item"], o["merchant"], o["node"]) == (line, merchant["id"], node)
            ),
            None,
        )
        if offer is None:
            offer = {"item": line, "merchant": merchant["id"], "node": node, "price": 0}
            cart["offers"].append(offer)
        offer["price"] = -(-each // quantity[line])
        offer["stock"] = rng.choice([None, quantity[line]])
        picks.append(offer)
    merchant["discount"] = None
    if rng.random() < 0.5:  # a discount (of at most 25%) only both lines' units reach
        merchant["discount"] = {
            "min_units": quantity[a] + quantity[b],
            "basis_points": rng.choice([1, 500, 2500]),
        }
    goods = _goods(cart, merchant, picks)
    _set_free_over(merchant, max(0, goods + rng.choice([0, 0, -1, 1])))


def stock_across_nodes(rng: random.Random, cart: Cart) -> None:
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


def _flat_weight_fee(rng: random.Random, rate: dict[str, Any], grams: int, kilos: bool) -> None:
    """A node's weight fee made constant over every parcel it can ship (none, one tier or two
    of one fee holding the whole cart's ``grams``, or past a last tier of 0 g with no fee a
    kilogram), or linear in whole kilograms past a tier of 0 g (``kilos``: every line weighs
    whole kilograms); where ``per_extra_unit`` is above ``base_fee`` the fee pays the
    difference, so the node's opening cost stays >= 0 (sometimes exactly 0)."""
    base, per = rate["base_fee"], rate["per_extra_unit"]
    fee = rng.choice([0, 1, base, 2 * base + 1]) + max(0, per - base)
    style = rng.choice(["none", "holds", "one-fee", "no-kilo-fee", "per-kilo"])
    rate.pop("per_kg_over", None)
    if style == "none":
        rate.pop("weight_tiers", None)
        if base < per:
            rate["per_extra_unit"] = base
        return
    if style == "holds":
        tiers = [{"up_to_g": grams + rng.choice([0, 0, 1, 5000]), "fee": fee}]
    elif style == "one-fee":
        tiers = [{"up_to_g": e, "fee": fee} for e in (grams // 2, grams + 1)]
    else:
        tiers = [{"up_to_g": 0, "fee": fee}]
        per_kg = rng.choice([1, base + 1, 10 * base + 7]) if style == "per-kilo" and kilos else 0
        rate["per_kg_over"] = per_kg
    rate["weight_tiers"] = tiers


def flatten(rng: random.Random, cart: Cart) -> None:
    """Make every merchant flat, as the flat route (``gpu_engine.solvers.flat``) takes it: its
    discount out of reach or of 0 bp, its threshold out of reach by a cent, 0 or met by every
    shipment, each node's weight fee constant or per whole kilogram (:func:`_flat_weight_fee`).
    Reaches are counted over every offer whatever its stock, so the later edits that restock
    or trim a cart keep it flat. One cart in six keeps one merchant as drawn (most often not
    flat: the route's refusals are exercised too)."""
    quantity = {item["id"]: item["quantity"] for item in cart["items"]}
    kilos = rng.random() < 0.4
    if kilos:
        for item in cart["items"]:
            item["weight_g"] = (item.get("weight_g") or 0) // 1000 * 1000 + rng.choice([0, 1000])
    grams = sum(item["quantity"] * (item.get("weight_g") or 0) for item in cart["items"])
    units = sum(quantity.values())
    kept = rng.choice(cart["merchants"]) if rng.random() < 1 / 6 else None
    for merchant in cart["merchants"]:
        if merchant is kept:
            continue
        best: dict[str, int] = {}
        for o in cart["offers"]:
            if o["merchant"] == merchant["id"]:
                goods = quantity[o["item"]] * o["price"]
                best[o["item"]] = max(best.get(o["item"], 0), goods)
        cheapest = min(
            (
                quantity[o["item"]] * o["price"]
                for o in cart["offers"]
                if o["merchant"] == merchant["id"]
            ),
            default=0,
        )
        merchant["discount"] = rng.choice(
            [
                None,
                {"min_units": units + 1, "basis_points": rng.choice([1, 10_000])},
                {"min_units": 1, "basis_points": 0},
            ]
        )
        _set_free_over(merchant, rng.choice([None, None, sum(best.values()) + 1, cheapest, 0]))
        if "nodes" not in merchant:
            rate = merchant["shipping"]
            rate["per_extra_unit"] = min(rate["per_extra_unit"], rate["base_fee"])
            continue
        for node in merchant["nodes"]:
            _flat_weight_fee(rng, node["shipping"], grams, kilos)


def keep_eligible(rng: random.Random, cart: Cart) -> None:
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


def to_limit(rng: random.Random, cart: Cart, *, over: bool) -> None:
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
