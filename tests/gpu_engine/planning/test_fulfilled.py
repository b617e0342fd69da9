"""The planner's route for version 2 carts: exhaustive where it fits, else the GA and HiGHS;
never a wrong proof, answers re-priced by the spec's reference."""

import pytest

from gpu_engine import CartProblem, solve
from gpu_engine.bench.v2_family import v2_uniform_cart
from gpu_engine.fuzz.v2_carts import random_v2_cart
from gpu_engine.reference import reference_brute_force_v2, reference_cost_v2
from gpu_engine.solvers.milp.runner import solve_milp


def _named(solution):
    return {line: (m, solution.nodes[line]) for line, m in solution.assignment.items()}


@pytest.mark.parametrize("seed", range(16))
def test_small_v2_carts_are_proven_at_the_reference_optimum(seed):
    cart = random_v2_cart(7000 + seed, 5, cents=[1, 100, 10_000][seed % 3])
    solution = solve(CartProblem.from_dict(cart), allow_gpu=False)
    assert solution.optimal
    assert solution.total == reference_brute_force_v2(cart)[0]
    assert reference_cost_v2(cart, _named(solution)) == solution.total
    assert solution.plan["fulfillment"].startswith("version 2")


@pytest.mark.parametrize("seed", range(3))
def test_larger_v2_carts_are_never_below_the_proven_optimum(seed):
    cart = v2_uniform_cart(40, 4, 15, 100 + seed)
    problem = CartProblem.from_dict(cart)
    exact = solve_milp(problem)
    assert exact.optimal
    solution = solve(problem, budget_ms=400, allow_gpu=False)
    assert solution.total >= exact.total
    assert reference_cost_v2(cart, _named(solution)) == solution.total
    if solution.optimal:
        assert solution.total == exact.total


def test_money_past_highs_range_runs_the_ga_alone_and_claims_no_false_proof():
    cart = random_v2_cart(42, 30, n_merchants=6, cents=10**13)
    problem = CartProblem.from_dict(cart)
    solution = solve(problem, budget_ms=300, allow_gpu=False)
    assert reference_cost_v2(cart, _named(solution)) == solution.total
    ran = [phase["method"] for phase in solution.plan["ran"]]
    assert "milp" not in ran or solution.plan["method"].endswith("full")


def test_sparse_v2_carts_go_to_the_merchant_dp_and_carry_an_exact_proof():
    problem = CartProblem.from_dict(v2_uniform_cart(16, 6, 30, 3))
    solution = solve(problem, budget_ms=5000, allow_gpu=False)
    assert solution.plan["method"] == "cpu-dp"
    assert solution.optimal
    assert solution.stats["proof"] == {"kind": "exact", "by": "dp"}
    assert solution.total == solve_milp(problem).total


def test_flat_v2_carts_are_proven_by_the_flat_solver_at_highs_optimum():
    """Carts too large for exhaustion whose every merchant is facility location: the flat
    solver proves them (an integer proof), at HiGHS's optimum."""
    import random

    from gpu_engine.fuzz.v2_edits import flatten
    from gpu_engine.solvers.flat.data import is_flat

    proven = 0
    for seed in range(12):
        cart = random_v2_cart(9100 + seed, 30, cents=[1, 100][seed % 2])
        flatten(random.Random(seed), cart)
        problem = CartProblem.from_dict(cart)
        if not is_flat(problem):
            continue
        solution = solve(problem, budget_ms=2000, allow_gpu=False)
        assert solution.total == solve_milp(problem).total
        assert reference_cost_v2(cart, _named(solution)) == solution.total
        if solution.plan["method"] == "flat":
            proven += 1
            assert solution.optimal
            assert solution.stats["proof"]["kind"] == "exact"
    assert proven >= 3
