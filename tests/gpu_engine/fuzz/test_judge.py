"""Judging one cart's answers, on hand-made outcomes (no processes)."""

import itertools
import json

from gpu_engine import WARMUP_CART as _TINY
from gpu_engine.fuzz.carts import FuzzCart
from gpu_engine.fuzz.judge import judge_cart
from gpu_engine.fuzz.reference import brute_force, cart_total
from gpu_engine.fuzz.supervisor import Outcome, Task

CART = FuzzCart(key="0:0", shape="test", text=json.dumps(_TINY), cart=_TINY)
OPTIMUM, BEST = brute_force(_TINY)
WORSE = {"a": "m2", "b": "m2", "c": "m2"}
_ids = itertools.count()


def _answer(route, assignment, *, total=None, optimal=False, budget_ms=None, **extra):
    priced = cart_total(_TINY, assignment)
    data = {
        "total": priced if total is None else total,
        "optimal": optimal,
        "assignment": assignment,
        "breakdown_total": priced if total is None else total,
        "gap": None,
        "wall_ms": 1.0,
        **extra,
    }
    return _outcome(route, "ok", data, budget_ms)


def _outcome(route, status, data, budget_ms=None):
    task = Task("0:0", "solve", CART.text, route=route, budget_ms=budget_ms, id=next(_ids))
    return Outcome(task, status, data)


def _reference():
    task = Task("0:0", "reference", CART.text, id=next(_ids))
    return Outcome(task, "ok", {"optimum": OPTIMUM, "assignment": BEST})


def _flags(verdicts, route):
    return next(v.flags for v in verdicts if v.route == route)


def test_the_worse_assignment_is_worse():
    assert cart_total(_TINY, WORSE) > OPTIMUM


def test_honest_answers_pass():
    runs = [
        _answer("dp", BEST, optimal=True),
        _answer("cpu-ga", WORSE, gap=0.2),  # bound 6839 <= 7121
        _answer("milp", BEST, optimal=True, budget_ms=200.0, wall_ms=150.0),
    ]
    oracle, verdicts, findings = judge_cart(CART, _reference(), runs)
    assert (oracle.optimum, oracle.source) == (OPTIMUM, "brute")
    assert findings == []
    assert _flags(verdicts, "dp") == ["proved", "at_optimum"]
    assert _flags(verdicts, "cpu-ga") == ["suboptimal"]
    assert verdicts[2].wall_ratio == 0.75


def test_a_proof_above_the_optimum_is_wrong():
    _, _, findings = judge_cart(CART, _reference(), [_answer("milp", WORSE, optimal=True)])
    assert [(f.route, f.kind) for f in findings] == [("milp", "wrong_proof")]


def test_without_an_optimum_a_proof_above_another_answer_is_wrong():
    """A large cart: no brute force, no exact routes; the cheaper answer still convicts."""
    runs = [_answer("milp", WORSE, optimal=True), _answer("cpu-ga", BEST)]
    oracle, _, findings = judge_cart(CART, None, runs)
    assert oracle.source == "none" and oracle.upper == OPTIMUM
    assert [(f.route, f.kind) for f in findings] == [("milp", "wrong_proof")]
    assert "cpu-ga found" in findings[0].detail


def test_a_total_below_the_optimum_that_does_not_reprice():
    runs = [_answer("dp", BEST, total=OPTIMUM - 1, optimal=True)]
    _, _, findings = judge_cart(CART, _reference(), runs)
    assert {f.kind for f in findings} == {"bad_price", "wrong_proof", "below_optimum"}


def test_an_assignment_that_is_no_assignment():
    run = _answer("dp", BEST)
    run.data["assignment"] = {"a": "m1"}
    _, _, findings = judge_cart(CART, _reference(), [run])
    assert [f.kind for f in findings] == ["bad_price"]
    assert "invalid assignment" in findings[0].detail


def test_a_breakdown_that_does_not_sum_to_the_total():
    run = _answer("dp", BEST, optimal=True)
    run.data["breakdown_total"] += 1
    _, _, findings = judge_cart(CART, _reference(), [run])
    assert [f.kind for f in findings] == ["bad_price"]


def test_a_gap_that_claims_a_bound_above_the_optimum():
    worse = cart_total(_TINY, WORSE)
    run = _answer("cpu-ga", WORSE, gap=(worse - OPTIMUM - 50) / worse)
    _, _, findings = judge_cart(CART, _reference(), [run])
    assert [f.kind for f in findings] == ["wrong_gap"]


def test_exact_routes_agreeing_decide_the_optimum():
    runs = [
        _answer("cpu-full", BEST, optimal=True),
        _answer("dp", BEST, optimal=True),
        _answer("milp", WORSE, optimal=True),
    ]
    oracle, _, findings = judge_cart(CART, None, runs)
    assert (oracle.optimum, oracle.source) == (OPTIMUM, "exact")
    assert [(f.route, f.kind) for f in findings] == [("milp", "wrong_proof")]


def test_exact_routes_disagreeing_decide_nothing_and_the_dearer_is_convicted():
    runs = [_answer("cpu-full", BEST, optimal=True), _answer("dp", WORSE, optimal=True)]
    oracle, _, findings = judge_cart(CART, None, runs)
    assert oracle.optimum is None
    assert [(f.route, f.kind) for f in findings] == [("dp", "wrong_proof")]


def test_crashes_tracebacks_and_hangs_are_findings_refusals_are_not():
    runs = [
        _outcome("milp", "crash", {"error": "killed by SIGSEGV", "log": "File x, line 1"}),
        _outcome("dp", "traceback", {"error": "ValueError: no", "traceback": "..."}),
        _outcome("auto", "hang", {"timeout_s": 3.0}, budget_ms=10.0),
        _outcome("cpu-full", "refused", {"error": "BudgetError: far over"}),
    ]
    _, verdicts, findings = judge_cart(CART, _reference(), runs)
    assert [(f.route, f.kind) for f in findings] == [
        ("milp", "crash"),
        ("dp", "traceback"),
        ("auto", "hang"),
    ]
    assert "SIGSEGV" in findings[0].detail and "3.0 s" in findings[2].detail
    assert _flags(verdicts, "cpu-full") == []
