"""Version 2 input (spec: nodes, weights, parcel rates by weight): what is read, what is refused
with the field and the value named, and that version 1 input keeps its total."""

import copy
import itertools
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpu_engine import CartProblem, ProblemError, price_assignment
from gpu_engine.fuzz.v2_carts import random_v2_cart
from gpu_engine.pricing import total_of
from gpu_engine.reference import (
    reference_brute_force,
    reference_brute_force_v2,
    reference_cost_v2,
)
from tests.gpu_engine.strategies import carts

SPEC_EXAMPLE = {
    "items": [{"id": "sku-7", "quantity": 2, "weight_g": 1200}],
    "merchants": [
        {
            "id": "m-3",
            "free_over": 5000,
            "discount": {"min_units": 3, "basis_points": 500},
            "nodes": [
                {
                    "id": "hamburg",
                    "shipping": {
                        "base_fee": 499,
                        "per_extra_unit": 100,
                        "weight_tiers": [
                            {"up_to_g": 2000, "fee": 0},
                            {"up_to_g": 10000, "fee": 300},
                        ],
                        "per_kg_over": 150,
                    },
                },
                {"id": "munich", "shipping": {"base_fee": 399, "per_extra_unit": 0}},
            ],
        }
    ],
    "offers": [
        {"item": "sku-7", "merchant": "m-3", "node": "hamburg", "price": 1999, "stock": 10},
        {"item": "sku-7", "merchant": "m-3", "node": "munich", "price": 1999, "stock": 1},
    ],
}


def _spec():
    return copy.deepcopy(SPEC_EXAMPLE)


def test_spec_example_prices_as_the_spec_says():
    problem = CartProblem.from_dict(_spec())
    assert not problem.simple
    # Munich has 1 unit: not eligible for 2. Hamburg: 2 x 1999 = 3998 < 5000; parcel 2 units of
    # 2400 g: 499 + 100 + 300 (second tier).
    assert problem.complexity == 1
    (shipment,) = price_assignment(problem, {"sku-7": ["m-3", "hamburg"]})
    assert (shipment.subtotal, shipment.shipping, shipment.cost) == (3998, 899, 4897)
    (parcel,) = shipment.parcels
    assert (parcel.node, parcel.units, parcel.weight_g, parcel.fee) == ("hamburg", 2, 2400, 899)


def test_per_kg_over_counts_started_kilograms():
    data = _spec()
    data["items"][0]["weight_g"] = 5501  # 11002 g: 1002 g over the last tier -> 2 started kg
    problem = CartProblem.from_dict(data)
    (shipment,) = price_assignment(problem, {"sku-7": ["m-3", "hamburg"]})
    assert shipment.shipping == 499 + 100 + 300 + 2 * 150
    data["items"][0]["weight_g"] = 5500  # exactly 1000 g over: one kilogram
    problem = CartProblem.from_dict(data)
    (shipment,) = price_assignment(problem, {"sku-7": ["m-3", "hamburg"]})
    assert shipment.shipping == 499 + 100 + 300 + 150


def test_threshold_counts_every_node_of_a_merchant():
    data = _spec()
    data["items"] = [
        {"id": "a", "quantity": 1, "weight_g": 100},
        {"id": "b", "quantity": 1, "weight_g": 100},
    ]
    data["merchants"][0]["discount"] = None
    data["offers"] = [
        {"item": "a", "merchant": "m-3", "node": "hamburg", "price": 2600, "stock": None},
        {"item": "b", "merchant": "m-3", "node": "munich", "price": 2600, "stock": None},
    ]
    problem = CartProblem.from_dict(data)
    (shipment,) = price_assignment(problem, {"a": ["m-3", "hamburg"], "b": ["m-3", "munich"]})
    # 5200 >= 5000: both parcels ship free.
    assert (shipment.shipping, shipment.cost) == (0, 5200)
    assert [p.fee for p in shipment.parcels] == [0, 0]
    assert [p.node for p in shipment.parcels] == ["hamburg", "munich"]


def test_round_trip_keeps_version_2_and_version_1():
    problem = CartProblem.from_dict(_spec())
    assert CartProblem.from_dict(problem.to_dict()).to_dict() == problem.to_dict()
    assert "nodes" in problem.to_dict()["merchants"][0]
    v1 = {
        "items": [{"id": "a", "quantity": 1}],
        "merchants": [
            {
                "id": "m",
                "shipping": {"base_fee": 1, "per_extra_unit": 0, "free_over": None},
                "discount": None,
            }
        ],
        "offers": [{"item": "a", "merchant": "m", "price": 5, "stock": None}],
    }
    assert CartProblem.from_dict(v1).to_dict() == v1


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(carts(max_items=4, max_merchants=3))
def test_version_1_input_keeps_its_total_when_written_as_version_2(cart):
    v1_total, _ = reference_brute_force(cart)
    v2 = {
        "items": cart["items"],
        "merchants": [
            {
                "id": m["id"],
                "free_over": m["shipping"].get("free_over"),
                "discount": m.get("discount"),
                "nodes": [
                    {
                        "id": "only",
                        "shipping": {
                            "base_fee": m["shipping"]["base_fee"],
                            "per_extra_unit": m["shipping"]["per_extra_unit"],
                        },
                    }
                ],
            }
            for m in cart["merchants"]
        ],
        "offers": [{**o, "node": "only"} for o in cart["offers"]],
    }
    assert reference_brute_force_v2(v2)[0] == v1_total
    assert reference_brute_force_v2(cart)[0] == v1_total
    problem = CartProblem.from_dict(v2)
    assert problem.simple
    assert _exhaustive(problem) == v1_total


def _exhaustive(problem: CartProblem) -> int:
    columns = [np.flatnonzero(problem.price[i] >= 0) for i in range(problem.n_items)]
    return min(total_of(problem, np.array(c)) for c in itertools.product(*columns))


@pytest.mark.parametrize("seed", range(40))
def test_engine_pricing_agrees_with_the_reference_on_every_assignment(seed):
    data = random_v2_cart(seed, 4, cents=[1, 100, 10**9][seed % 3])
    problem = CartProblem.from_dict(data)
    f = problem.fulfillment
    columns = [np.flatnonzero(problem.price[i] >= 0) for i in range(problem.n_items)]
    for choice in itertools.product(*columns):
        named = {
            problem.item_ids[i]: (f.owner_ids[f.column_owner[c]], f.node_ids[c])
            for i, c in enumerate(choice)
        }
        total = total_of(problem, np.array(choice))
        assert total == reference_cost_v2(data, named)
        assert total == sum(s.cost for s in price_assignment(problem, np.array(choice)))


def _refusal(data) -> ProblemError:
    with pytest.raises(ProblemError) as info:
        CartProblem.from_dict(data)
    return info.value


def _edit(path, value):
    data = _spec()
    target = data
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


REFUSALS = [
    (("items", 0, "weight_g"), -1, "items[0].weight_g", -1),
    (("items", 0, "weight_g"), 1.5, "items[0].weight_g", 1.5),
    (("items", 0, "weight_g"), True, "items[0].weight_g", True),
    (("merchants", 0, "nodes"), [], "merchants[0].nodes", []),
    (("merchants", 0, "free_over"), -5, "merchants[0].free_over", -5),
    (("merchants", 0, "nodes", 1, "id"), "hamburg", "merchants[0].nodes[1].id", "hamburg"),
    (
        ("merchants", 0, "nodes", 0, "shipping", "per_kg_over"),
        -1,
        "merchants[0].nodes[0].shipping.per_kg_over",
        -1,
    ),
    (
        ("merchants", 0, "nodes", 0, "shipping", "weight_tiers", 1, "up_to_g"),
        2000,
        "merchants[0].nodes[0].shipping.weight_tiers[1].up_to_g",
        2000,
    ),
    (
        ("merchants", 0, "nodes", 0, "shipping", "weight_tiers", 0, "fee"),
        -1,
        "merchants[0].nodes[0].shipping.weight_tiers[0].fee",
        -1,
    ),
    (
        ("merchants", 0, "nodes", 0, "shipping", "colour"),
        "red",
        "merchants[0].nodes[0].shipping.colour",
        "red",
    ),
    (
        ("merchants", 0, "nodes", 0, "shipping", "free_over"),
        10,
        "merchants[0].nodes[0].shipping.free_over",
        10,
    ),
    (("offers", 0, "node"), "berlin", "offers[0].node", "berlin"),
    (("offers", 0, "node"), None, "offers[0].node", None),
    (("offers", 0, "node"), KeyError, "offers[0].node", None),
    (
        ("merchants", 0, "shipping"),
        {"base_fee": 1, "per_extra_unit": 0},
        "merchants[0].shipping",
        {"base_fee": 1, "per_extra_unit": 0},
    ),
]


@pytest.mark.parametrize(("path", "value", "field", "shown"), REFUSALS)
def test_bad_version_2_input_is_refused_naming_field_and_value(path, value, field, shown):
    error = _refusal(_edit(path, value))
    assert error.field == field
    assert error.value == shown


def test_a_second_offer_for_one_item_merchant_and_node_is_refused():
    data = _spec()
    data["offers"].append(dict(data["offers"][0]))
    error = _refusal(data)
    assert error.field == "offers[2]"


def test_a_line_with_no_eligible_node_is_named():
    data = _spec()
    data["offers"][0]["stock"] = 1  # both nodes short of 2 units
    error = _refusal(data)
    assert error.field == "items" and error.value == ["sku-7"]


def test_money_past_the_limit_is_refused_with_weight_fees_counted():
    data = _spec()
    node = data["merchants"][0]["nodes"][0]["shipping"]
    node["per_kg_over"] = 2**61
    data["items"][0]["weight_g"] = 10**6
    error = _refusal(data)
    assert error.field == "items"


def test_json_text_with_version_2_merchants():
    problem = CartProblem.from_json(json.dumps(_spec()))
    assert problem.fulfillment.node_ids == ("hamburg", "munich")
    assert problem.merchant_ids == ("m-3@hamburg", "m-3@munich")


@pytest.mark.parametrize("seed", range(12))
def test_reference_brute_force_matches_exhaustive_engine_pricing(seed):
    data = random_v2_cart(1000 + seed, 5)
    assert reference_brute_force_v2(data)[0] == _exhaustive(CartProblem.from_dict(data))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6))
def test_mixed_version_1_and_version_2_merchants(seed):
    data = random_v2_cart(seed, 3, n_merchants=3)
    v1 = data["merchants"][0]
    node = v1["nodes"][0]
    data["merchants"][0] = {
        "id": v1["id"],
        "shipping": {
            "base_fee": node["shipping"]["base_fee"],
            "per_extra_unit": node["shipping"]["per_extra_unit"],
            "free_over": v1.get("free_over"),
        },
        "discount": v1.get("discount"),
    }
    data["offers"] = [
        {k: v for k, v in o.items() if k != "node"} if o["merchant"] == v1["id"] else o
        for o in data["offers"]
        if o["merchant"] != v1["id"] or o["node"] == node["id"]
    ]
    try:
        problem = CartProblem.from_dict(data)
    except ProblemError as error:
        assert error.field == "items"  # dropping nodes left a line without an offer
        return
    assert reference_brute_force_v2(data)[0] == _exhaustive(problem)
