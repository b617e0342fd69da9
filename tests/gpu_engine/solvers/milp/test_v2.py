"""HiGHS on version 2 carts (nodes, weight tiers, per-kg over): proven optima equal the brute
force's, on random carts and on carts built around one rule each."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_engine import CartProblem
from gpu_engine.fuzz.v2_carts import random_v2_cart
from gpu_engine.problem import CapacityError
from gpu_engine.reference import reference_brute_force_v2, reference_cost_v2
from gpu_engine.solvers.milp.model import highs_trusted
from gpu_engine.solvers.milp.runner import solve_milp
from tests.gpu_engine.solvers.milp.v2_carts import (
    assert_milp_exact,
    item,
    merchant,
    node,
    offer,
    solution_picks,
)


def _check_random(seed: int, cents: int) -> None:
    cart = random_v2_cart(seed, 3 + seed % 5, cents=cents)
    problem = CartProblem.from_dict(cart)
    if problem.simple:
        return  # version 1 pricing: the v1 tests' ground
    if not highs_trusted(problem):
        # Beyond HiGHS's exact range: refused as on a version 1 cart, never a guess.
        with pytest.raises(CapacityError) as refused:
            solve_milp(problem)
        assert refused.value.field == "money"
        return
    assert_milp_exact(cart)


@pytest.mark.parametrize("cents", [1, 100, 100_000])
@pytest.mark.parametrize("seed", range(25))
def test_random_v2_carts_equal_brute_force(seed, cents):
    _check_random(seed, cents)


@pytest.mark.slow
@pytest.mark.parametrize("cents", [1, 100, 3_000, 100_000])
@pytest.mark.parametrize("seed", range(25, 150))
def test_many_random_v2_carts_equal_brute_force(seed, cents):
    _check_random(seed, cents)


def test_a_heavy_item_tips_the_parcel_into_the_next_tier():
    """Both lines at node a weigh 2100 g: over its 2000 g tier (fee 900), so one goes to b."""
    tiers = [(2000, 0), (10_000, 900)]
    cart = {
        "items": [item("light", 1, 600), item("heavy", 1, 1500)],
        "merchants": [
            merchant("m", [node("a", 300, 0, tiers), node("b", 300, 0, [(5000, 50)])]),
        ],
        "offers": [
            offer("light", "m", "a", 1000),
            offer("heavy", "m", "a", 1000),
            offer("light", "m", "b", 1100),
        ],
    }
    solution = assert_milp_exact(cart)
    assert solution.nodes == {"light": "b", "heavy": "a"}


@settings(max_examples=40, deadline=None)
@given(
    grams=st.integers(0, 3),
    offset=st.sampled_from([-1, 0, 1, 999, 1000, 1001]),
    per_kg=st.sampled_from([0, 1, 250]),
    price_b=st.integers(900, 1900),
)
def test_started_kilograms_at_exact_kilogram_boundaries(grams, offset, per_kg, price_b):
    """A parcel ``grams`` kilograms (and ``offset`` g) over its last tier against a flat node:
    the started kilograms decide, exactly at 1000 g multiples too."""
    weight = 3000 + 1000 * grams + offset
    cart = {
        "items": [item("x", 1, weight), item("y", 2, 0)],
        "merchants": [
            merchant("m", [node("a", 200, 0, [(1000, 100), (3000, 400)], per_kg)]),
            merchant("n", [node("b", 0)]),
        ],
        "offers": [
            offer("x", "m", "a", 1000),
            offer("x", "n", "b", price_b),
            offer("y", "m", "a", 500),
            offer("y", "n", "b", 700),
        ],
    }
    assert_milp_exact(cart)


def test_a_threshold_reachable_only_across_two_nodes():
    """Each node stocks one line; only both at m reach its 5000 threshold, and then both
    parcels ship free."""
    cart = {
        "items": [item("p", 1, 500), item("q", 1, 500)],
        "merchants": [
            merchant("m", [node("n1", 900, 0), node("n2", 900, 0)], free_over=5000),
            merchant("o", [node("o1", 0)]),
        ],
        "offers": [
            offer("p", "m", "n1", 2600, stock=1),
            offer("p", "m", "n2", 2600, stock=0),
            offer("q", "m", "n2", 2500, stock=3),
            offer("q", "m", "n1", 2500, stock=0),
            offer("p", "o", "o1", 2900),
            offer("q", "o", "o1", 2800),
        ],
    }
    solution = assert_milp_exact(cart)
    assert solution.total == 5100
    assert solution.nodes == {"p": "n1", "q": "n2"}


def test_a_discount_counts_the_units_of_every_node():
    """min_units 3 reached only with lines at both nodes; the discount floors 3 x 333 * 5%."""
    cart = {
        "items": [item("a", 2, 100), item("b", 1, 100)],
        "merchants": [
            merchant("m", [node("n1", 100), node("n2", 100)], discount=(3, 500)),
            merchant("o", [node("o1", 0)]),
        ],
        "offers": [
            offer("a", "m", "n1", 333),
            offer("b", "m", "n2", 333),
            offer("a", "o", "o1", 345),
            offer("b", "o", "o1", 350),
        ],
    }
    assert_milp_exact(cart)


@pytest.mark.parametrize("light", [0, 999, 1000, 1001, 4999])
def test_non_increasing_tier_fees_charge_the_tier_that_holds_the_weight(light):
    """Node a's first tier costs more than its second: a light parcel still pays the first."""
    cart = {
        "items": [item("x", 1, light), item("y", 1, 0)],
        "merchants": [
            merchant("m", [node("a", 100, 0, [(1000, 800), (5000, 100)], 40)]),
            merchant("n", [node("b", 350)]),
        ],
        "offers": [
            offer("x", "m", "a", 1000),
            offer("x", "n", "b", 1200),
            offer("y", "m", "a", 400),
            offer("y", "n", "b", 300),
        ],
    }
    solution = assert_milp_exact(cart)
    fee = 800 if light <= 1000 else 100
    picks = solution_picks(solution)
    assert reference_cost_v2(cart, picks) == solution.total
    if picks["x"][1] == "a":
        (parcel,) = [p for c in solution.breakdown for p in c.parcels if p.node == "a"]
        assert parcel.fee == 100 + fee


@pytest.mark.parametrize("free_over", [None, 0, 1, 2000, 2001])
def test_a_full_discount_with_thresholds_and_two_nodes(free_over):
    """10000 basis points: the goods are 0 once min_units is met, never free at a positive
    threshold then; the parcels of both nodes are paid."""
    cart = {
        "items": [item("a", 1, 1200), item("b", 2, 900)],
        "merchants": [
            merchant(
                "m",
                [node("n1", 300, 100, [(2000, 0), (4000, 250)], 90), node("n2", 200, 50)],
                free_over=free_over,
                discount=(3, 10_000),
            ),
            merchant("o", [node("o1", 400, 0)]),
        ],
        "offers": [
            offer("a", "m", "n1", 1000),
            offer("a", "m", "n2", 1000, stock=1),
            offer("b", "m", "n1", 500),
            offer("b", "m", "n2", 500, stock=1),
            offer("a", "o", "o1", 700),
            offer("b", "o", "o1", 200),
        ],
    }
    assert_milp_exact(cart)


def test_ties_between_nodes_of_one_price_prove_either():
    """One parcel of 2800 g (base 300, 2 started kg at 150) or two of 1400 g (2 x 300): 600
    either way, every node at the same price."""
    cart = {
        "items": [item(f"i{k}", 1, 700) for k in range(4)],
        "merchants": [
            merchant(
                "m", [node("a", 300, 0, [(1400, 0)], 150), node("b", 300, 0, [(1400, 0)], 150)]
            )
        ],
        "offers": [offer(f"i{k}", "m", nid, 1000) for k in range(4) for nid in ("a", "b")],
    }
    solution = assert_milp_exact(cart)
    assert solution.total == 4000 + 600


def test_money_near_highs_range_is_exact_and_beyond_it_refused():
    """Amounts just under HiGHS's range stay exact; a parcel's grams or goods past it are
    refused with the money field, as on a version 1 cart."""
    near = {
        "items": [item("a", 1, 1500), item("b", 1, 700)],
        "merchants": [
            merchant(
                "m",
                [node("n1", 9_000_000, 1_000_000, [(2000, 5_000_000)], 3_000_000), node("n2", 0)],
                free_over=80_000_000,
                discount=(2, 2_500),
            ),
            merchant("o", [node("o1", 2_000_000)]),
        ],
        "offers": [
            offer("a", "m", "n1", 39_999_999),
            offer("b", "m", "n1", 33_333_333),
            offer("a", "m", "n2", 41_000_001, stock=1),
            offer("a", "o", "o1", 38_000_000),
            offer("b", "o", "o1", 37_000_000),
        ],
    }
    assert highs_trusted(CartProblem.from_dict(near))
    assert_milp_exact(near)
    heavy = {**near, "items": [item("a", 1, 150_000_000), item("b", 1, 700)]}
    problem = CartProblem.from_dict(heavy)
    assert not highs_trusted(problem)
    with pytest.raises(CapacityError) as refused:
        solve_milp(problem)
    assert refused.value.field == "money"


def test_a_warm_start_of_columns_is_kept_when_the_run_is_cut():
    cart = random_v2_cart(7, 6)
    problem = CartProblem.from_dict(cart)
    assert not problem.simple
    best, _ = reference_brute_force_v2(cart)
    warm = problem.cand_merchant[range(problem.n_items), problem.cand_count - 1].astype(int)
    cut = solve_milp(problem, budget_ms=1, warm_start=warm)
    assert cut.total >= best and (cut.optimal is False or cut.total == best)
    proven = solve_milp(problem, warm_start=warm)
    assert proven.optimal and proven.total == best


@pytest.mark.parametrize("seed", range(4))
def test_algorithm_milp_takes_v2_carts(seed):
    """``solve(..., algorithm="milp")``: the drop heuristic's warm start, then the proof."""
    from gpu_engine import solve

    cart = random_v2_cart(seed, 5)
    problem = CartProblem.from_dict(cart)
    best, _ = reference_brute_force_v2(cart)
    answer = solve(problem, algorithm="milp")
    assert answer.algorithm == "milp" and answer.optimal and answer.total == best
    assert reference_cost_v2(cart, solution_picks(answer)) == best
