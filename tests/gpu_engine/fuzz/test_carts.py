"""Fuzz carts: deterministic, valid, and on both sides of the service's money limit."""

import json

import pytest

from gpu_engine import CartProblem, ProblemError
from gpu_engine.fuzz.carts import MONEY_LIMIT, SHAPES, engine_money_bound
from gpu_engine.fuzz.draw import fuzz_cart
from gpu_engine.fuzz.reference import eligible_merchants
from gpu_engine.problem import MONEY_LIMIT as ENGINE_LIMIT


def test_same_seed_and_index_give_the_same_cart():
    assert fuzz_cart(3, 17).text == fuzz_cart(3, 17).text
    assert fuzz_cart(3, 17).text != fuzz_cart(3, 18).text
    assert json.loads(fuzz_cart(3, 17).text) == fuzz_cart(3, 17).cart


def test_the_limit_is_the_engines():
    assert MONEY_LIMIT == ENGINE_LIMIT


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_shape_gives_carts_the_engine_reads_exactly_as_bounded(shape):
    """Accepted exactly when the bound is under the limit; every line keeps an eligible offer."""
    for index in range(25):
        fc = fuzz_cart(11, index, (shape,))
        assert fc.shape == shape
        assert all(eligible_merchants(fc.cart).values())
        if engine_money_bound(fc.cart) >= MONEY_LIMIT:
            with pytest.raises(ProblemError, match="worst-case cart total"):
                CartProblem.from_json(fc.text)
        else:
            CartProblem.from_json(fc.text)


def test_the_extremes_occur():
    carts = [fuzz_cart(0, i).cart for i in range(300)]
    merchants = [m for c in carts for m in c["merchants"]]
    discounts = {m["discount"]["basis_points"] for m in merchants if m["discount"]}
    assert {0, 1, 9999, 10_000} <= discounts
    assert {0, 1} <= {m["shipping"]["free_over"] for m in merchants}
    assert any(m["shipping"]["per_extra_unit"] > m["shipping"]["base_fee"] for m in merchants)
    assert max(i["quantity"] for c in carts for i in c["items"]) >= 10**8
    bounds = [engine_money_bound(c) for c in carts]
    assert any(MONEY_LIMIT // 2 < b < MONEY_LIMIT for b in bounds)
    assert any(b >= MONEY_LIMIT for b in bounds)
    assert any(o["stock"] is not None for c in carts for o in c["offers"])
