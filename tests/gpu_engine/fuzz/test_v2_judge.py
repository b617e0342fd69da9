"""Judging version 2 answers on hand-made outcomes (no processes): re-priced with each line's
node, a planted wrong proof caught, FulfillmentUnsupported counted apart."""

import itertools
import json

import pytest

from gpu_engine.fuzz import judge as judge_module
from gpu_engine.fuzz.carts import FuzzCart
from gpu_engine.fuzz.judge import judge_cart
from gpu_engine.fuzz.reference import brute_force_v2, cart_total_v2
from gpu_engine.fuzz.report import Tally
from gpu_engine.fuzz.supervisor import Outcome, Task

# m1 ships from two warehouses, one stocking each line; its threshold needs both lines.
CART = {
    "items": [{"id": "a", "quantity": 1, "weight_g": 2000}, {"id": "b", "quantity": 2}],
    "merchants": [
        {
            "id": "m1",
            "free_over": 3000,
            "nodes": [
                {
                    "id": "north",
                    "shipping": {
                        "base_fee": 400,
                        "per_extra_unit": 0,
                        "weight_tiers": [{"up_to_g": 2000, "fee": 0}],
                        "per_kg_over": 200,
                    },
                },
                {"id": "south", "shipping": {"base_fee": 300, "per_extra_unit": 100}},
            ],
        },
        {"id": "m2", "shipping": {"base_fee": 500, "per_extra_unit": 0, "free_over": None}},
    ],
    "offers": [
        {"item": "a", "merchant": "m1", "node": "north", "price": 1500, "stock": 1},
        {"item": "a", "merchant": "m1", "node": "south", "price": 1400, "stock": 0},
        {"item": "b", "merchant": "m1", "node": "south", "price": 800, "stock": None},
        {"item": "a", "merchant": "m2", "price": 1450},
        {"item": "b", "merchant": "m2", "price": 700},
    ],
}
FC = FuzzCart(key="0:0", shape="test", text=json.dumps(CART), cart=CART)
OPTIMUM, BEST = brute_force_v2(CART)
WORSE = {"a": ("m2", "m2"), "b": ("m2", "m2")}
_ids = itertools.count()


def _answer(route, picks, *, total=None, optimal=False, budget_ms=None, cart=CART):
    assignment = {ln: m for ln, (m, _) in picks.items()}
    nodes = {ln: n for ln, (_, n) in picks.items()}
    priced = cart_total_v2(cart, assignment, nodes)
    data = {
        "total": priced if total is None else total,
        "optimal": optimal,
        "assignment": assignment,
        "nodes": nodes,
        "breakdown_total": priced if total is None else total,
        "gap": None,
        "wall_ms": 1.0,
    }
    return _outcome(route, "ok", data, budget_ms)


def _outcome(route, status, data, budget_ms=None):
    task = Task("0:0", "solve", FC.text, route=route, budget_ms=budget_ms, id=next(_ids))
    return Outcome(task, status, data)


def _reference():
    return Outcome(Task("0:0", "reference", FC.text, id=next(_ids)), "ok", {"optimum": OPTIMUM})


def test_the_optimum_ships_both_warehouses_and_the_worse_is_worse():
    assert BEST == {"a": ("m1", "north"), "b": ("m1", "south")}
    assert OPTIMUM == 1500 + 1600  # the threshold met across two nodes: no parcel fee
    assert cart_total_v2(CART, {"a": "m2", "b": "m2"}, {"a": "m2", "b": "m2"}) > OPTIMUM


def test_honest_v2_answers_pass():
    runs = [_answer("cpu-full", BEST, optimal=True), _answer("cpu-ga", WORSE)]
    oracle, _, findings = judge_cart(FC, _reference(), runs)
    assert (oracle.optimum, oracle.source) == (OPTIMUM, "brute")
    assert findings == []


def test_a_planted_wrong_proof_on_a_v2_cart_is_caught():
    _, _, findings = judge_cart(FC, _reference(), [_answer("milp", WORSE, optimal=True)])
    assert [(f.route, f.kind) for f in findings] == [("milp", "wrong_proof")]


def test_the_node_decides_the_price():
    """The same merchants with a line at a node that does not stock it: no assignment."""
    run = _answer("cpu-full", BEST, optimal=True)
    run.data["nodes"] = {"a": "south", "b": "south"}
    _, _, findings = judge_cart(FC, _reference(), [run])
    assert [f.kind for f in findings] == ["bad_price"]
    assert "no eligible offer" in findings[0].detail


def test_cpu_full_and_milp_agreeing_decide_the_optimum_of_a_v2_cart():
    runs = [
        _answer("cpu-full", BEST, optimal=True),
        _answer("milp", BEST, optimal=True),
        _answer("cpu-ga", WORSE, optimal=True),
    ]
    oracle, _, findings = judge_cart(FC, None, runs)
    assert (oracle.optimum, oracle.source) == (OPTIMUM, "exact")
    assert [(f.route, f.kind) for f in findings] == [("cpu-ga", "wrong_proof")]


def test_fulfillment_unsupported_is_a_clean_refusal_on_v2_and_a_defect_on_a_simple_cart():
    error = {"error": "FulfillmentUnsupported: algorithm: does not price several warehouses"}
    _, verdicts, findings = judge_cart(FC, _reference(), [_outcome("flat", "unsupported", error)])
    assert findings == [] and verdicts[0].status == "unsupported"
    tally = Tally()
    tally.add(verdicts[0])
    assert tally.counts[("flat", None)]["unsupported"] == 1 and tally.failures() == 0
    simple = dict(CART, merchants=[CART["merchants"][1]], offers=CART["offers"][3:])
    simple_fc = FuzzCart(key="0:1", shape="test", text=json.dumps(simple), cart=simple)
    _, _, findings = judge_cart(simple_fc, None, [_outcome("flat", "unsupported", error)])
    assert [f.kind for f in findings] == ["bad_refusal"]


def test_the_two_readings_of_the_spec_disagreeing_is_a_finding(monkeypatch):
    import gpu_engine.reference

    real = gpu_engine.reference.reference_cost_v2
    monkeypatch.setattr(gpu_engine.reference, "reference_cost_v2", lambda c, a: real(c, a) + 1)
    _, _, findings = judge_cart(FC, _reference(), [_answer("cpu-full", BEST, optimal=True)])
    assert [f.kind for f in findings] == ["oracle_mismatch"]


def test_a_brute_force_mismatch_fails_the_run():
    reference = Outcome(
        Task("0:0", "reference", FC.text, id=next(_ids)), "mismatch", {"error": "x"}
    )
    _, _, findings = judge_cart(FC, reference, [])
    tally = Tally()
    tally.add_cart(FC.key, FC.shape, judge_module.Oracle(None, "none", None, ""), [], findings)
    assert [f.kind for f in findings] == ["oracle_mismatch"] and tally.failures() == 1


@pytest.mark.parametrize("route", ["fault-lie", "fault-overclaim"])
def test_the_fault_routes_lie_on_v2_carts(route):
    """They are the judge's planted wrong proofs: on a v2 cart they answer (no refusal)."""
    from gpu_engine import CartProblem
    from gpu_engine.fuzz.faults import FAULTS

    solution = FAULTS[route](CartProblem.from_dict(CART), None, 0)
    assert solution.optimal
    priced = cart_total_v2(CART, solution.assignment, solution.nodes)
    assert solution.total < OPTIMUM or priced > OPTIMUM
