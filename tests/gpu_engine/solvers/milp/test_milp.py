"""The HiGHS MILP backend: exact against brute force, warm starts, time limits and gaps."""

import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_engine import CartProblem, solve
from gpu_engine.planning.carts import random_cart
from gpu_engine.pricing import assignment_cost
from gpu_engine.reference import reference_brute_force, reference_cost
from gpu_engine.solvers.milp.model import milp_build, milp_point
from gpu_engine.solvers.milp.runner import CUT_STATUS, milp_proves, solve_milp
from tests.gpu_engine.strategies import carts


def _merchant(mid, base, extra, free_over=None, discount=None):
    return {
        "id": mid,
        "shipping": {"base_fee": base, "per_extra_unit": extra, "free_over": free_over},
        "discount": discount,
    }


def _offer(item, merchant, price, stock=None):
    return {"item": item, "merchant": merchant, "price": price, "stock": stock}


def _assert_exact(cart):
    best, _ = reference_brute_force(cart)
    solution = solve_milp(CartProblem.from_dict(cart))
    assert solution.optimal and solution.total == best
    assert reference_cost(cart, solution.assignment) == best
    return solution


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(carts(max_items=5, max_merchants=4))
def test_equals_brute_force(cart):
    _assert_exact(cart)


@st.composite
def boundary_carts(draw):
    """Two merchants; merchant x's threshold or discount sits exactly at the goods or units of
    one group of lines, so the optimum hinges on the boundary (and on the discount pushing the
    goods back under the threshold)."""
    n = draw(st.integers(2, 4))
    qty = [draw(st.integers(1, 3)) for _ in range(n)]
    price_x = [draw(st.integers(100, 2000)) for _ in range(n)]
    group = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
    goods = sum(qty[i] * price_x[i] for i in group)
    units = sum(qty[i] for i in group)
    bp = draw(st.sampled_from([0, 500, 1000, 10_000]))
    discounted = goods - goods * bp // 10_000
    free_over = draw(st.sampled_from([goods, discounted, discounted + 1, goods - 1]))
    discount = draw(st.sampled_from([None, {"min_units": units, "basis_points": bp}]))
    items = [{"id": f"i{i}", "quantity": q} for i, q in enumerate(qty)]
    offers = [_offer(f"i{i}", "x", price_x[i]) for i in range(n)]
    offers += [_offer(f"i{i}", "y", price_x[i] + draw(st.integers(-50, 50))) for i in range(n)]
    merchants = [
        _merchant(
            "x",
            draw(st.sampled_from([300, 700])),
            draw(st.sampled_from([0, 900])),
            max(0, free_over),
            discount,
        ),
        _merchant("y", draw(st.sampled_from([0, 400])), 100),
    ]
    return {"items": items, "merchants": merchants, "offers": offers}


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(boundary_carts())
def test_thresholds_and_discounts_at_the_boundary(cart):
    _assert_exact(cart)


def test_a_discount_that_costs_free_shipping():
    # Both lines at x: 10% off drops the goods to 1800, under free_over 2000, so 1800 + 500.
    # A model that let the solver skip the discount would keep shipping free and answer 2000;
    # the discount is mandatory, and a at x (1000 + 500) with b at y (700) wins at 2200.
    cart = {
        "items": [{"id": "a", "quantity": 1}, {"id": "b", "quantity": 1}],
        "merchants": [
            _merchant("x", 500, 0, 2000, {"min_units": 2, "basis_points": 1000}),
            _merchant("y", 0, 0, None),
        ],
        "offers": [
            _offer("a", "x", 1000),
            _offer("b", "x", 1000),
            _offer("b", "y", 700),
        ],
    }
    solution = _assert_exact(cart)
    assert solution.total == 1000 + 500 + 700


@settings(max_examples=30, deadline=None)
@given(carts(max_items=5, max_merchants=4), st.integers(0, 10**6))
def test_any_assignment_is_a_feasible_warm_start(cart, pick):
    problem = CartProblem.from_dict(cart)
    rng = np.random.default_rng(pick)
    choice = np.array(
        [
            problem.cand_merchant[i, rng.integers(problem.cand_count[i])]
            for i in range(problem.n_items)
        ]
    )
    milp = milp_build(problem)
    lp = milp.model.arrays()
    values = milp_point(milp, choice)
    start, index = lp.starts, lp.index
    activity = np.array(
        [
            lp.value[start[r] : start[r + 1]] @ values[index[start[r] : start[r + 1]]]
            for r in range(lp.row_lower.size)
        ]
    )
    assert np.all(activity >= lp.row_lower - 1e-6)
    assert np.all(activity <= lp.row_upper + 1e-6)
    objective = float(lp.cost @ values)
    priced = assignment_cost(choice, problem.quantity, problem.price, *problem.merchant_params)
    assert math.isclose(objective, priced, abs_tol=1e-6)


def _recording_requests(monkeypatch) -> list[dict]:
    """The requests the runner sends to HiGHS's solver process, recorded on their way."""
    from gpu_engine.solvers.milp import runner

    requests: list[dict] = []
    real = runner.highs_process.run

    def recording(request, deadline, **lane):
        requests.append(request)
        return real(request, deadline, **lane)

    monkeypatch.setattr(runner.highs_process, "run", recording)
    return requests


def test_time_limit_returns_the_incumbent_with_its_gap(monkeypatch):
    requests = _recording_requests(monkeypatch)
    problem = CartProblem.from_dict(random_cart(3, 60))
    warm = problem.cand_merchant[:, 0].astype(np.int64)
    warm_total = int(
        assignment_cost(warm, problem.quantity, problem.price, *problem.merchant_params)
    )
    solution = solve_milp(problem, budget_ms=200, warm_start=warm)
    assert solution.total <= warm_total
    # HiGHS gets what the model build left of the budget, less a margin for its late clock
    # checks (whether it keeps to it on real time is the device benchmark's question).
    assert len(requests) == 1
    assert 0 < requests[0]["time_limit"] * 1e3 < max(1.0, 200 - solution.stats["build_ms"])
    # Or cut: on a loaded machine HiGHS can outlast its limit, and the deadline stops it.
    assert solution.stats["highs_status"] in ("Optimal", "Time limit reached", CUT_STATUS)
    if not solution.optimal:
        assert 0 < solution.gap < 1


def test_proof_needs_the_bound_to_round_up_to_the_total():
    assert milp_proves(100, 99.5)
    assert milp_proves(100, 99.01)
    assert milp_proves(100, 100.00001)  # floating-point noise above the integer
    assert not milp_proves(100, 98.9)
    assert not milp_proves(100, -math.inf)


def test_registered_as_a_solver():
    cart = random_cart(4, 6, n_merchants=5, offers=(1, 3))
    best, _ = reference_brute_force(cart)
    solution = solve(CartProblem.from_dict(cart), algorithm="milp")
    assert solution.algorithm == "milp" and solution.optimal and solution.total == best


@pytest.mark.parametrize("seed", range(3))
def test_flat_carts_of_thirty_lines_are_proven(seed):
    cart = random_cart(seed, 30, thresholds=False, discounts=False)
    solution = solve_milp(CartProblem.from_dict(cart), budget_ms=20_000)
    assert solution.optimal


def _warm_cart():
    problem = CartProblem.from_dict(random_cart(3, 60))
    warm = problem.cand_merchant[:, 0].astype(np.int64)
    total = int(assignment_cost(warm, problem.quantity, problem.price, *problem.merchant_params))
    return problem, warm, total


class _Clock:
    """``time`` for the MILP module: still unless a test moves it."""

    def __init__(self) -> None:
        self.now = 1000.0

    def perf_counter(self) -> float:
        return self.now


def test_a_deadline_during_the_build_cuts_the_run_and_keeps_the_warm_start(monkeypatch):
    """The clock passes the deadline while the model is built: the build stops at its next
    check, HiGHS never starts, and the warm start comes back unproven."""
    from gpu_engine.solvers.milp import runner as milp

    clock = _Clock()
    monkeypatch.setattr(milp, "time", clock)
    real_build = milp.milp_build

    def slow_build(problem, **kwargs):
        clock.now += 1.0
        return real_build(problem, **kwargs)

    monkeypatch.setattr(milp, "milp_build", slow_build)
    started = _recording_requests(monkeypatch)
    problem, warm, warm_total = _warm_cart()
    solution = solve_milp(problem, budget_ms=1, warm_start=warm)
    assert solution.stats["cut"] and solution.stats["highs_status"] == milp.CUT_STATUS
    assert solution.total == warm_total and not solution.optimal and 0 < solution.gap < 1
    assert started == []
    with pytest.raises(RuntimeError, match="no assignment"):
        solve_milp(problem, budget_ms=1)


def test_a_deadline_during_highs_interrupts_it(monkeypatch):
    """The deadline passes while HiGHS runs (a 100-line cart with thresholds is far from solved
    by then): the caller returns cut at once, and ``cancelSolve`` stops HiGHS at its next
    interrupt check in the solver process."""
    from gpu_engine.solvers.milp import highs_process
    from gpu_engine.solvers.milp import runner as milp

    real_reply_for = highs_process._Child.reply_for
    waits: list[int] = []

    def deadline_once_highs_runs(child, job, timeout_s, stop=None):
        if not waits:
            waits.append(job)
            time.sleep(0.05)  # HiGHS is set up and running by now
            return highs_process.CUT
        return real_reply_for(child, job, timeout_s, stop)

    monkeypatch.setattr(highs_process._Child, "reply_for", deadline_once_highs_runs)
    problem = CartProblem.from_dict(random_cart(1, 100))
    outcome = milp.milp_run(problem, time_limit_ms=60_000)
    assert outcome.cut and outcome.choice is None and outcome.status == milp.CUT_STATUS
    child = highs_process.service().child
    assert child is not None and child.pending == waits[0]
    reply = real_reply_for(child, waits[0], 60)
    # Interrupted while running, or (on a loaded machine) cancelled before it started.
    assert reply["status"] in ("Interrupted by user", "Not Set")


def test_without_a_deadline_the_run_is_not_cut():
    problem = CartProblem.from_dict(random_cart(4, 6, n_merchants=5, offers=(1, 3)))
    solution = solve_milp(problem)
    assert solution.optimal and not solution.stats["cut"]


@st.composite
def deep_threshold_carts(draw):
    """The threshold_deep family in miniature: every merchant has a free-shipping threshold
    near one or two lines' goods and most a deep multi-unit discount that can push the goods
    back under it: where the perspective rows (``sum goods * w >= free_over * f``, ``sum units
    * z >= min_units * d``) bind."""
    n_lines, n_merchants = draw(st.integers(2, 6)), draw(st.integers(1, 3))
    typical = 1000
    merchants = []
    for m in range(n_merchants):
        discount = draw(
            st.one_of(
                st.none(),
                st.fixed_dictionaries(
                    {"min_units": st.integers(1, 4), "basis_points": st.integers(2000, 10_000)}
                ),
            )
        )
        merchants.append(
            _merchant(
                f"m{m}",
                draw(st.integers(0, 900)),
                draw(st.sampled_from([0, 0, 50, 1500])),
                draw(st.integers(typical // 2, 3 * typical)),
                discount,
            )
        )
    items, offers = [], []
    for i in range(n_lines):
        items.append({"id": f"i{i}", "quantity": draw(st.integers(1, 3))})
        at = draw(st.lists(st.integers(0, n_merchants - 1), min_size=1, unique=True))
        offers += [_offer(f"i{i}", f"m{m}", draw(st.integers(typical // 3, typical))) for m in at]
    return {"items": items, "merchants": merchants, "offers": offers}


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(deep_threshold_carts())
def test_deep_thresholds_and_discounts_equal_brute_force(cart):
    from gpu_engine.bounds.lp import lp_bound

    solution = _assert_exact(cart)
    bound = lp_bound(CartProblem.from_dict(cart)).bound
    assert bound is not None and bound <= solution.total


def _large_cart(n_lines: int = 10_000, n_merchants: int = 30) -> CartProblem:
    """3 offers a line (round robin), thresholds and discounts everywhere: a program of ~90,000
    columns and ~700,000 nonzeros whose build and hand-off to HiGHS alone outlast a 150 ms
    budget (~0.4 s before the hand-off counted against it)."""
    merchants = [
        _merchant(
            f"m{m}", 300 + 37 * m, 50, 9000, {"min_units": 4, "basis_points": 300 + 100 * (m % 5)}
        )
        for m in range(n_merchants)
    ]
    offers = [
        _offer(f"i{i}", f"m{(i + k) % n_merchants}", 100 + (i * 131 + k * 71) % 4000)
        for i in range(n_lines)
        for k in range(3)
    ]
    items = [{"id": f"i{i}", "quantity": 1 + i % 3} for i in range(n_lines)]
    return CartProblem.from_dict({"items": items, "merchants": merchants, "offers": offers})


class _StepClock(_Clock):
    """``time`` for the MILP module: one millisecond passes at every reading."""

    def perf_counter(self) -> float:
        self.now += 1e-3
        return self.now


def test_the_budget_covers_the_build_and_the_hand_off_on_a_large_cart(monkeypatch):
    """The deadline is checked through the whole build (model, arrays, ``passModel``): on a
    clock that moves 1 ms at each reading, a 10,000-line cart's LP bound and proof stop within a
    reading of a deadline that falls inside the model's build, and at 150 ms the arrays and
    ``passModel`` predicted past the deadline are not started (HiGHS is handed nothing)."""
    from gpu_engine.bounds.lp import lp_bound
    from gpu_engine.solvers.milp import runner

    passed = _recording_requests(monkeypatch)
    problem = _large_cart()
    warm = problem.cand_merchant[:, 0].astype(np.int64)
    for budget in (5.0, 20.0, 150.0):
        monkeypatch.setattr(runner, "time", _StepClock())
        bound = lp_bound(problem, time_limit_ms=budget)
        assert bound.status == CUT_STATUS and bound.ms <= budget + 2.0
        monkeypatch.setattr(runner, "time", _StepClock())
        outcome = runner.milp_run(problem, time_limit_ms=budget, warm_start=warm)
        assert outcome.cut and outcome.build_ms + outcome.solve_ms <= budget + 2.0
    assert passed == []


def test_a_hand_off_predicted_past_the_deadline_is_not_started(monkeypatch):
    """HiGHS's ``passModel`` cannot be interrupted: a hand-off predicted to end past the
    deadline stops the run before it (cut, no model in HiGHS, the warm start kept)."""
    from gpu_engine.solvers.milp import runner

    passed = _recording_requests(monkeypatch)
    monkeypatch.setattr(runner, "_PASS_MS_PER_NONZERO", 1e6)
    problem, warm, warm_total = _warm_cart()
    solution = solve_milp(problem, budget_ms=10_000, warm_start=warm)
    assert solution.stats["cut"] and solution.stats["highs_status"] == CUT_STATUS
    assert solution.total == warm_total and not solution.optimal
    assert passed == []
