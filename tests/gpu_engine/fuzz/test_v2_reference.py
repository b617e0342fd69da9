"""The fuzzer's own version 2 pricing and brute force agree with gpu_engine.reference (two
readings of the spec), with version 1's on version 1 carts, and with hand-worked parcels."""

import random

import pytest

from gpu_engine.fuzz.draw import fuzz_cart, shape_names
from gpu_engine.fuzz.reference import (
    InvalidAssignment,
    brute_force,
    brute_force_v2,
    cart_total,
    cart_total_v2,
    eligible_offers,
    is_simple,
    weight_fee,
)
from gpu_engine.fuzz.runner import reach
from gpu_engine.reference import reference_brute_force_v2, reference_cost_v2

RATE = {
    "base_fee": 0,
    "per_extra_unit": 0,
    "weight_tiers": [{"up_to_g": 0, "fee": 7}, {"up_to_g": 2000, "fee": 300}],
    "per_kg_over": 150,
}


@pytest.mark.parametrize(
    ("grams", "fee"),
    [(0, 7), (1, 300), (2000, 300), (2001, 450), (3000, 450), (3001, 600), (12_000, 1800)],
)
def test_weight_fee_at_the_edges(grams, fee):
    assert weight_fee(RATE, grams) == fee


def test_no_tiers_cost_nothing_and_per_kg_over_may_be_absent():
    assert weight_fee({"weight_tiers": None}, 10**9) == 0
    assert weight_fee({"weight_tiers": []}, 5) == 0
    assert weight_fee({"weight_tiers": [{"up_to_g": 0, "fee": 3}]}, 10**6) == 3


def _random_answer(rng, cart):
    picks = {line: rng.choice(options) for line, options in eligible_offers(cart).items()}
    return {ln: m for ln, (m, _) in picks.items()}, {ln: n for ln, (_, n) in picks.items()}, picks


def test_v2_pricing_agrees_with_the_engines_reference_on_every_shape():
    rng = random.Random(4)
    for index in range(150):
        cart = fuzz_cart(9, index, shape_names("2")).cart
        for _ in range(3):
            assignment, nodes, picks = _random_answer(rng, cart)
            assert cart_total_v2(cart, assignment, nodes) == reference_cost_v2(cart, picks)


def test_v2_brute_force_agrees_with_reference_brute_force_v2_on_small_carts():
    checked = 0
    for index in range(120):
        fc = fuzz_cart(13, index, shape_names("2"))
        size = reach(fc)
        if size is None or size.assignments > 400:
            continue
        total, picks = brute_force_v2(fc.cart)
        assert total == reference_brute_force_v2(fc.cart)[0], fc.key
        assignment = {ln: m for ln, (m, _) in picks.items()}
        assert cart_total_v2(fc.cart, assignment, {ln: n for ln, (_, n) in picks.items()}) == total
        checked += 1
    assert checked >= 40


def test_on_version_1_carts_the_v2_pricing_is_version_1s():
    rng = random.Random(1)
    for index in range(60):
        cart = fuzz_cart(21, index).cart
        assert is_simple(cart)
        assignment, nodes, _ = _random_answer(rng, cart)
        assert cart_total_v2(cart, assignment, nodes) == cart_total(cart, assignment)
        if len(cart["items"]) <= 5:
            assert brute_force_v2(cart)[0] == brute_force(cart)[0]


def test_an_answer_that_is_no_assignment_of_the_cart():
    cart = fuzz_cart(0, 0, ("v2-split-threshold",)).cart
    assignment, nodes, _ = _random_answer(random.Random(0), cart)
    line = next(iter(assignment))
    with pytest.raises(InvalidAssignment, match="do not match"):
        cart_total_v2(cart, assignment, {k: v for k, v in nodes.items() if k != line})
    with pytest.raises(InvalidAssignment, match="no eligible offer"):
        cart_total_v2(cart, assignment, {**nodes, line: "no such node"})
