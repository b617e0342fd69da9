"""Version 2 fuzz carts: deterministic, valid spec JSON (or refused as intended past the money
limit), in their size class, and reaching the extremes the issue lists."""

import json
import math

import pytest

from gpu_engine import CartProblem, ProblemError
from gpu_engine.fuzz.carts import MONEY_LIMIT
from gpu_engine.fuzz.draw import fuzz_cart, shape_names
from gpu_engine.fuzz.reference import eligible_offers, is_simple, is_v2
from gpu_engine.fuzz.v2_edits import engine_money_bound_v2
from gpu_engine.fuzz.v2_shapes import V2_SHAPES

V2 = shape_names("2")


def _carts(count, seed=0):
    return [fuzz_cart(seed, i, V2).cart for i in range(count)]


def _assignments(cart):
    return math.prod(len(picks) for picks in eligible_offers(cart).values())


def test_same_seed_and_index_give_the_same_cart_and_the_shape_alone_reproduces_it():
    first = fuzz_cart(3, 17, V2)
    assert first.text == fuzz_cart(3, 17, V2).text != fuzz_cart(3, 18, V2).text
    assert fuzz_cart(3, 17, (first.shape,)).text == first.text  # the findings' re-run line
    assert fuzz_cart(3, 17, shape_names("all")).shape in shape_names("all")


def test_version_1_runs_draw_what_they_drew():
    assert fuzz_cart(0, 5).shape in shape_names("1")
    assert not any(is_v2(fuzz_cart(0, i).cart) for i in range(30))


@pytest.mark.parametrize("shape", sorted(V2_SHAPES))
def test_every_v2_shape_is_read_exactly_as_bounded_and_keeps_its_size(shape):
    """Accepted exactly when the bound is under the limit (then the engine counts the
    assignments the fuzzer counts), refused with a ProblemError naming the bound otherwise."""
    _, _, cap = V2_SHAPES[shape]
    for index in range(25):
        fc = fuzz_cart(11, index, (shape,))
        assert fc.shape == shape and json.loads(fc.text) == fc.cart
        assert all(eligible_offers(fc.cart).values())
        assert cap is None or _assignments(fc.cart) <= cap
        if engine_money_bound_v2(fc.cart) >= MONEY_LIMIT:
            with pytest.raises(ProblemError, match="worst-case cart total"):
                CartProblem.from_json(fc.text)
        else:
            problem = CartProblem.from_json(fc.text)
            assert problem.complexity == _assignments(fc.cart)
            assert problem.simple == is_simple(fc.cart)


def _rates(cart):
    for merchant in cart["merchants"]:
        for node in merchant.get("nodes", []):
            yield merchant, node["id"], node["shipping"]


def test_the_v2_extremes_occur():
    carts = _carts(500)
    rates = [rate for c in carts for _, _, rate in _rates(c)]
    tiers = [rate.get("weight_tiers") or [] for rate in rates]
    assert {0, 1} <= {len(t) for t in tiers} and max(len(t) for t in tiers) >= 4
    assert any(t and t[0]["up_to_g"] == 0 for t in tiers)
    assert any(len(t) > 1 and t[0]["fee"] > t[-1]["fee"] for t in tiers)  # fees that fall
    per_kg = {rate.get("per_kg_over") for rate in rates if rate.get("weight_tiers")}
    assert 0 in per_kg and max(p or 0 for p in per_kg) >= 10**5
    nodes = {len(m["nodes"]) for c in carts for m in c["merchants"] if "nodes" in m}
    assert nodes == {1, 2, 3}
    assert any(
        any("nodes" in m for m in c["merchants"]) and any("shipping" in m for m in c["merchants"])
        for c in carts
    )
    discounts = {
        m["discount"]["basis_points"] for c in carts for m in c["merchants"] if m.get("discount")
    }
    assert {0, 1, 9999, 10_000} <= discounts
    lines = [len(c["items"]) for c in carts]
    assert min(lines) == 3 and max(lines) >= 100
    bounds = [engine_money_bound_v2(c) for c in carts]
    assert any(MONEY_LIMIT // 2 < b < MONEY_LIMIT for b in bounds)
    assert any(b >= MONEY_LIMIT for b in bounds)
    assert min(o["price"] for c in carts for o in c["offers"] if o["price"]) == 1
    assert {"v2-small", "v2-medium", "v2-large"} <= {_size(c) for c in carts}


def _size(cart):
    count = _assignments(cart)
    if count <= 20_000 and len(cart["items"]) <= 16:
        return "v2-small"
    return "v2-medium" if count <= 2_000_000 else "v2-large"


def test_parcels_weigh_exactly_a_tier_edge_a_gram_over_and_whole_kilos_past_the_last():
    """A line alone at a node weighs (quantity x grams) exactly an edge, one gram over, or the
    last edge plus whole kilos, in some of the weight-edge carts."""
    on_edge = gram_over = kilos_over = 0
    for index in range(200):
        cart = fuzz_cart(5, index, ("v2-weight-edges",)).cart
        grams = {i["id"]: i["quantity"] * (i.get("weight_g") or 0) for i in cart["items"]}
        for merchant, node, rate in _rates(cart):
            edges = [t["up_to_g"] for t in rate.get("weight_tiers") or []]
            for offer in cart["offers"]:
                if edges and (offer["merchant"], offer.get("node")) == (merchant["id"], node):
                    g = grams[offer["item"]]
                    on_edge += g in edges
                    gram_over += g - 1 in edges
                    kilos_over += g > edges[-1] and (g - edges[-1]) % 1000 == 0
    assert on_edge and gram_over and kilos_over


def test_one_node_short_another_enough_and_thresholds_only_two_nodes_reach():
    short_and_enough = split = 0
    for index in range(60):
        cart = fuzz_cart(2, index, ("v2-node-stock",)).cart
        quantity = {i["id"]: i["quantity"] for i in cart["items"]}
        by_seller = {}
        for o in cart["offers"]:
            by_seller.setdefault((o["item"], o["merchant"]), []).append(o.get("stock"))
        short_and_enough += any(
            quantity[line] - 1 in stocks and quantity[line] in stocks
            for (line, _), stocks in by_seller.items()
        )
        cart = fuzz_cart(2, index, ("v2-split-threshold",)).cart
        split += _threshold_needs_two_nodes(cart)
    assert short_and_enough >= 20 and split >= 20


def _threshold_needs_two_nodes(cart):
    """A merchant whose lines are each stocked at one node, over two nodes, reaches its
    threshold with all of them but with no one node's."""
    quantity = {i["id"]: i["quantity"] for i in cart["items"]}
    for merchant in cart["merchants"]:
        if "nodes" not in merchant or merchant.get("free_over") is None:
            continue
        at = {}
        for o in cart["offers"]:
            stock = o.get("stock")
            if o["merchant"] == merchant["id"] and (stock is None or stock >= quantity[o["item"]]):
                at.setdefault(o["item"], []).append((o["node"], quantity[o["item"]], o["price"]))
        if len(at) < 2 or any(len(picks) != 1 for picks in at.values()):
            continue
        picks = [p[0] for p in at.values()]
        nodes = {node for node, _, _ in picks}
        alone = max(_goods(merchant, [p for p in picks if p[0] == n]) for n in nodes)
        if len(nodes) == 2 and _goods(merchant, picks) >= merchant["free_over"] > alone:
            return True
    return False


def _goods(merchant, picks):
    subtotal = sum(q * price for _, q, price in picks)
    rule = merchant.get("discount")
    if rule and sum(q for _, q, _ in picks) >= rule["min_units"]:
        subtotal -= subtotal * rule["basis_points"] // 10_000
    return subtotal
