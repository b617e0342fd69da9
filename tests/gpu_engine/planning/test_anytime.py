"""Anytime and monotone (issue 13): a larger budget never returns a worse total on the same cart
and seed, every route keeps its best, and the plan says what ran."""

import dataclasses
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_engine import CartProblem, solve
from gpu_engine.bench.family_carts import FAMILIES, zero_ties
from gpu_engine.planning.carts import random_cart
from gpu_engine.planning.profile import PowerLaw
from gpu_engine.pricing import assignment_cost
from gpu_engine.reference import reference_brute_force
from gpu_engine.solvers.ga.core import GaConfig, drop_greedy, ga_arrays, seeded_individuals
from gpu_engine.solvers.ga.solve import solve_ga
from tests.gpu_engine.planning.test_planner import _profile
from tests.gpu_engine.strategies import carts

pytestmark = pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaDeprecationWarning")

# Nothing exact predicted to fit, HiGHS far: every budget takes the GA-first anytime route.
GA_FIRST = _profile(
    milp_switched=PowerLaw(coef=1e6, power=0.0),
    milp_flat=PowerLaw(coef=1e6, power=0.0),
    cpu_full_rate=1.0,
)


@pytest.mark.slow
@settings(max_examples=20, deadline=None)
@given(
    cart=carts(max_items=6, max_merchants=5),
    budgets=st.lists(st.sampled_from([10.0, 40.0, 120.0]), min_size=2, max_size=2, unique=True),
    seed=st.integers(0, 3),
)
def test_a_larger_budget_is_never_worse(cart, budgets, seed):
    problem = CartProblem.from_dict(cart)
    small, large = sorted(budgets)
    runs = {
        b: solve(problem, budget_ms=b, seed=seed, allow_gpu=False, profile=GA_FIRST)
        for b in (small, large)
    }
    assert runs[large].total <= runs[small].total
    # Structurally: the larger budget's GA phase had at least the smaller one's time.
    ga_ms = {b: runs[b].plan["ran"][0]["budget_ms"] for b in runs}
    assert runs[small].plan["ran"][0]["phase"] == "cpu-ga"
    assert ga_ms == {b: runs[b].plan["ga_ms"] for b in runs}
    assert ga_ms[large] >= ga_ms[small]
    best, _ = reference_brute_force(cart)
    for run in runs.values():
        assert run.total >= best and (not run.optimal or run.total == best)


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(
    cart=carts(max_items=6, max_merchants=5), gens=st.tuples(st.integers(0, 6), st.integers(0, 6))
)
def test_the_ga_trajectory_only_improves(cart, gens):
    """The property the planner's monotonicity rests on: a GA run is a function of the seed and
    its generation count, and more generations never end worse."""
    problem = CartProblem.from_dict(cart)
    few, many = sorted(gens)
    totals = [
        solve_ga(
            problem,
            seed=1,
            device="cpu",
            config=GaConfig(population=16, max_generations=g, stall_generations=1000),
        ).total
        for g in (few, many)
    ]
    assert totals[1] <= totals[0]


def test_the_plan_says_what_ran_on_the_ga_first_route():
    problem = CartProblem.from_dict(random_cart(4, 12, n_merchants=8, offers=(2, 5)))
    solution = solve(problem, budget_ms=150, allow_gpu=False, profile=GA_FIRST)
    plan = solution.plan
    assert plan["order"] == "ga-first" and plan["method"] == "cpu-ga"
    phases = [p["phase"] for p in plan["ran"]]
    assert phases[0] == "cpu-ga"
    assert set(phases[1:]) <= {"lns", "lp-bound", "milp", "cpu-ga-restarts"}
    # Every phase that ran says how (time and total) or why it was skipped.
    for phase in plan["ran"][1:]:
        assert "skipped" in phase or "ms" in phase
    ga_total = plan["ran"][0]["total"]
    assert solution.total <= ga_total
    # Unproven, the GA restarts on what the other phases left, until the budget ends.
    if not solution.optimal:
        assert phases[-1] == "cpu-ga-restarts"
        last = plan["ran"][-1]
        assert "skipped" in last or last["stop"] in ("budget", "stall")


def test_the_ga_phase_time_is_nondecreasing_in_the_budget():
    from gpu_engine.planning.plan import ga_phase_ms

    for floor in (0.0, 20.0, 110.0, 1e6):
        times = [ga_phase_ms(b, floor) for b in range(1, 3000, 7)]
        assert times == sorted(times)
        assert all(0.5 * b <= t <= b for b, t in zip(range(1, 3000, 7), times, strict=True))


def test_the_ga_and_neighbourhood_times_are_nondecreasing_and_fit_the_budget():
    """On a cart the neighbourhood step runs on, the GA's time is still nondecreasing in the
    budget (the monotone property), and the two phases together never plan past it: after the
    CPU GA the two add up; beside the GPU GA the step fits within the GA's time."""
    from gpu_engine.planning import GpuState, make_plan
    from gpu_engine.planning.plan import lns_phase_ms

    problem = CartProblem.from_dict(FAMILIES["split_punish"](1, 40))
    for gpu in (GpuState(False), GpuState(True)):
        plans = [
            make_plan(problem, budget_ms=b, profile=GA_FIRST, gpu=gpu) for b in range(20, 3000, 13)
        ]
        assert all(p.order == "ga-first" and p.split.lns_ms > 0 for p in plans)
        for key in ("ga_ms", "cpu_ga_ms", "lns_ms"):
            times = [getattr(p.split, key) for p in plans]
            assert times == sorted(times), key
        if gpu.present:
            assert all(p.split.lns_ms <= p.split.ga_ms <= p.budget_ms + 1e-9 for p in plans)
            # The CPU GA of a GPU failure leaves the step its CPU-route share.
            assert all(p.split.cpu_lns_ms == lns_phase_ms(p.budget_ms) for p in plans)
            assert all(p.split.cpu_ga_ms + p.split.cpu_lns_ms <= p.budget_ms + 1e-9 for p in plans)
        else:
            assert all(p.split.ga_ms + p.split.lns_ms <= p.budget_ms + 1e-9 for p in plans)
            assert all(p.split.cpu_ga_ms + p.split.lns_ms <= p.budget_ms + 1e-9 for p in plans)
    assert {p.method for p in plans} == {"gpu-ga"}


def test_the_neighbourhood_step_runs_after_the_ga_and_says_what_it_did():
    problem = CartProblem.from_dict(FAMILIES["split_punish"](2, 40))
    solution = solve(problem, budget_ms=300, allow_gpu=False, profile=GA_FIRST)
    ran = solution.plan["ran"]
    assert [p["phase"] for p in ran][:2] == ["cpu-ga", "lns"]
    lns = ran[1]
    assert "skipped" in lns or (lns["total"] <= ran[0]["total"] and lns["steps"][0]["step"] == "lp")
    assert solution.total <= ran[0]["total"]
    assert solution.plan["lns_ms"] > 0
    # Small carts are the GA's: the step is skipped, with the reason.
    small = CartProblem.from_dict(random_cart(4, 12, n_merchants=8, offers=(2, 5)))
    skipped = solve(small, budget_ms=150, allow_gpu=False, profile=GA_FIRST).plan["ran"]
    assert next(p for p in skipped if p["phase"] == "lns")["skipped"]


def test_beside_the_gpu_ga_the_step_starts_from_the_cheapest_offers_and_keeps_the_best():
    """The GPU route's step runs in a thread while the GA runs (here a CPU GA stands in for the
    GPU's): the answer is the cheaper of the two, priced exactly, and the GA's time is whole."""
    from gpu_engine.planning import GpuState, make_plan
    from gpu_engine.planning.clock import Deadline
    from gpu_engine.planning.routes import NeighbourhoodBeside

    problem = CartProblem.from_dict(FAMILIES["split_punish"](2, 40))
    plan = make_plan(problem, budget_ms=300, profile=GA_FIRST, gpu=GpuState(True))
    assert plan.method == "gpu-ga" and 0 < plan.split.lns_ms <= plan.split.ga_ms
    started = time.perf_counter()
    beside = NeighbourhoodBeside(problem, plan)
    assert beside.started
    ga = solve_ga(problem, budget_ms=plan.split.ga_ms, seed=0, device="cpu")
    merged, record = beside.merge(ga, Deadline(started, plan.budget_ms))
    step = record.as_dict()
    assert step["phase"] == "lns" and step["beside_gpu_ga"] is True
    assert merged.total == min(ga.total, step["total"]) <= ga.total
    index = {merchant: m for m, merchant in enumerate(problem.merchant_ids)}
    choice = np.array([index[merged.assignment[item]] for item in problem.item_ids])
    priced = assignment_cost(choice, problem.quantity, problem.price, *problem.merchant_params)
    assert int(priced) == merged.total


@pytest.mark.slow
def test_the_lp_bound_proves_a_ga_answer_that_meets_it(monkeypatch):
    """A flat fixed-fee cart whose LP is tight: the GA's answer is proven by the bound."""
    from gpu_engine.planning import tuning

    proven = []
    for seed in range(6):
        problem = CartProblem.from_dict(FAMILIES["fixed_fee"](seed, 25))
        no_highs = dataclasses.replace(GA_FIRST, milp_overhead_ms=1e7)
        monkeypatch.setattr(tuning, "MIN_PROOF_MS", 1e9)  # HiGHS never after the LP
        monkeypatch.setattr(tuning, "GA_FLOOR_FACTOR", 0.0)  # the LP gets its half
        solution = solve(problem, budget_ms=400, allow_gpu=False, profile=no_highs)
        lp = [p for p in solution.plan["ran"] if p["phase"] == "lp-bound"]
        if solution.optimal and lp and lp[0].get("bound") is not None:
            assert solution.total <= lp[0]["bound"]
            proven.append(seed)
    assert proven, "the LP bound proves none of six fixed-fee carts"


def test_the_drop_seed_consolidates_zero_price_carts():
    """The cause of the 124% gap: cheapest offers on zero-price, tied lines spread the cart over
    many merchants, each charging its shipping. The drop seed closes them."""
    problem = CartProblem.from_dict(zero_ties(0, 60))
    arrays = ga_arrays(problem)
    seeded = seeded_individuals(arrays, 128)

    def cost(row):
        return int(
            assignment_cost(
                arrays.to_original(row), problem.quantity, problem.price, *problem.merchant_params
            )
        )

    assert cost(seeded[1]) < cost(seeded[0])
    row = np.empty(arrays.n_lines, dtype=np.int32)
    drop_greedy(row, arrays.qty, arrays.price, arrays.cand, arrays.params)
    assert np.array_equal(row, seeded[1])
    assert all(arrays.price[i, m] >= 0 for i, m in enumerate(row))


def test_the_gpu_ga_phase_stops_growing_and_stays_nondecreasing():
    """The GPU GA's share grows only up to ``GPU_GA_SHARE_UNTIL_MS`` of budget: past it the time
    goes to HiGHS's proof, and the GA's time is still nondecreasing (monotone answers)."""
    from gpu_engine.planning.plan import ga_phase_ms
    from gpu_engine.planning.tuning import GA_SHARE, GPU_GA_SHARE_UNTIL_MS

    budgets = range(1, 3000, 7)
    for floor in (0.0, 20.0, 110.0, 1e6):
        times = [ga_phase_ms(b, floor, share_until_ms=GPU_GA_SHARE_UNTIL_MS) for b in budgets]
        assert times == sorted(times)
        assert all(t <= b for b, t in zip(budgets, times, strict=True))
        # Never below what a smaller budget's uncapped phase was, up to the cap's budget.
        cap_budget = GPU_GA_SHARE_UNTIL_MS
        assert all(
            t >= ga_phase_ms(min(b, cap_budget), floor) for b, t in zip(budgets, times, strict=True)
        )
    assert ga_phase_ms(1000.0, 0.0, share_until_ms=GPU_GA_SHARE_UNTIL_MS) == (
        GA_SHARE * GPU_GA_SHARE_UNTIL_MS
    )


def test_the_gpu_ga_first_route_leaves_the_proof_the_rest():
    from gpu_engine.planning import GpuState, make_plan
    from gpu_engine.planning.tuning import GA_SHARE, GPU_GA_SHARE_UNTIL_MS

    problem = CartProblem.from_dict(random_cart(1, 60))  # thresholds and discounts: switched
    # HiGHS far on this cart, its floor (from flat carts' rate) low.
    profile = dataclasses.replace(GA_FIRST, milp_flat=PowerLaw(coef=10.0, power=0.0))
    gpu = make_plan(problem, budget_ms=1000, profile=profile, gpu=GpuState(present=True))
    cpu = make_plan(problem, budget_ms=1000, profile=profile, gpu=GpuState(present=False))
    assert gpu.method == "gpu-ga" and gpu.order == "ga-first"
    floor_ga = min(1000.0, 2.0 * gpu.proof_floor_ms)
    assert gpu.split.ga_ms == max(GA_SHARE * GPU_GA_SHARE_UNTIL_MS, floor_ga) < cpu.split.ga_ms
    assert cpu.method == "cpu-ga" and cpu.split.ga_ms == max(GA_SHARE * 1000.0, floor_ga)
    # A GPU GA that fails at run time falls back to the CPU GA, on the CPU GA's own share.
    assert gpu.split.cpu_ga_ms == cpu.split.ga_ms == cpu.split.cpu_ga_ms
