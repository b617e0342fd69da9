"""The issue-25 cart families and the ``anytime`` bench suite's summary (no solver runs)."""

from collections import defaultdict

from gpu_engine import CartProblem
from gpu_engine.bench import anytime, discover_suites
from gpu_engine.bench.anytime_carts import FAMILIES, barely_free, family_cart, one_cent
from gpu_engine.solvers.milp.model import highs_trusted


def test_the_families_are_valid_deterministic_carts_of_their_sizes():
    for family, (_, lines) in FAMILIES.items():
        cart = family_cart(family, 3)
        assert cart == family_cart(family, 3)
        problem = CartProblem.from_dict(cart)
        assert problem.n_items == lines
        assert highs_trusted(problem) == (family != "big_money")


def test_barely_free_merchants_just_reach_their_threshold_on_their_home_lines():
    cart = barely_free(5, 200)
    quantity = {item["id"]: item["quantity"] for item in cart["items"]}
    home_goods: dict[str, int] = defaultdict(int)
    seen = set()
    for offer in cart["offers"]:
        if offer["item"] not in seen:  # the first offer of a line is its home merchant's
            seen.add(offer["item"])
            home_goods[offer["merchant"]] += quantity[offer["item"]] * offer["price"]
    for merchant in cart["merchants"]:
        free_over = merchant["shipping"]["free_over"]
        goods = home_goods.get(merchant["id"], 0)
        if goods:
            assert free_over <= goods <= free_over * 1.006
        else:
            assert free_over is None


def test_one_cent_offers_differ_by_cents():
    cart = one_cent(2, 60)
    prices: dict[str, list[int]] = defaultdict(list)
    for offer in cart["offers"]:
        prices[offer["item"]].append(offer["price"])
    assert all(max(p) - min(p) <= 2 for p in prices.values())
    assert {m["shipping"]["base_fee"] for m in cart["merchants"]} <= {499, 500, 501}


def test_the_suite_is_discovered_and_sums_up_what_the_peer_proves_and_the_engine_not():
    assert "anytime" in discover_suites()
    rows = [
        {
            "case": "a:0",
            "engine_ms": 10_050.0,
            "engine_proven": False,
            "engine_total": 105,
            "peer_proven": True,
            "peer_total": 100,
            "peer_trusted": True,
        },
        {
            "case": "a:1",
            "engine_ms": 4_000.0,
            "engine_proven": False,
            "engine_total": 90,
            "peer_proven": False,
            "peer_total": 95,
            "peer_trusted": True,
        },
        {
            "case": "big:0",
            "engine_ms": 2_000.0,
            "engine_proven": True,
            "engine_total": 7,
            "peer_proven": True,
            "peer_total": 7,
            "peer_trusted": False,
        },
    ]
    summary = anytime._summary(rows, 10_000.0)
    assert summary["peer_proves_engine_not"] == "a:0"
    assert summary["engine_proven"] == 1 and summary["peer_proven"] == 1
    assert summary["engine_worse_total"] == 1
    assert summary["wall_over_budget_max"] == 1.005
    assert summary["unused_ms_unproven_max"] == 6_000.0
