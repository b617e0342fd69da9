"""The batch solver on version 2 carts (a merchant's nodes, parcel rates by weight), CPU twin:
exact against the spec's brute force, mixed with simple carts, too-large carts flagged, and
answers whose parcels are price_assignment's."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_engine import CartProblem, solve
from gpu_engine.batch import TOO_LARGE, pack_problems, solve_batch, solve_batch_multi, solve_packed
from gpu_engine.batch.engine import solve_problems
from gpu_engine.batch.pack import DP, FULL
from gpu_engine.batch.v2 import solve_v2
from gpu_engine.fuzz.v2_carts import random_v2_cart
from gpu_engine.pricing import price_assignment
from gpu_engine.problem import FulfillmentUnsupported
from gpu_engine.reference import reference_brute_force_v2, reference_cost_v2
from tests.gpu_engine.solvers.full import v2_cases


def simple_cart(seed: int, n_lines: int) -> dict:
    """A seeded cart of one node a merchant and no weight tiers: priced by version 1."""
    cart = random_v2_cart(seed, n_lines, max_nodes=1, offers=(1, 3))
    for merchant in cart["merchants"]:
        for node in merchant["nodes"]:
            node["shipping"].pop("weight_tiers", None)
            node["shipping"].pop("per_kg_over", None)
    assert CartProblem.from_dict(cart).simple
    return cart


def _answer(solution) -> dict[str, tuple[str, str]]:
    return {line: (m, solution.nodes[line]) for line, m in solution.assignment.items()}


def _check_exact(carts) -> None:
    """Every cart's batch answer is the brute force's optimum (a seeded cart may come out
    simple: then the version 1 path answers it, as solve_batch would)."""
    problems = [CartProblem.from_dict(cart) for cart in carts]
    result = solve_batch(problems, device="cpu")
    assert result.device == "cpu"
    for cart, solution in zip(carts, result.solutions, strict=True):
        best, _ = reference_brute_force_v2(cart)
        assert solution is not None and solution.optimal
        assert solution.total == best
        assert reference_cost_v2(cart, _answer(solution)) == best
        assert solution.algorithm == "batch-full"


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), cents=st.sampled_from([1, 100]), size=st.integers(1, 5))
def test_v2_batch_equals_the_brute_force(seed, cents, size):
    _check_exact(
        [v2_cases.small_v2_cart(seed + k, 3 + (seed + k) % 5, cents=cents) for k in range(size)]
    )


def test_v2_batch_on_hard_carts():
    carts = [v2_cases.tier_tipping_cart(), v2_cases.two_node_threshold_cart(), v2_cases.tied_cart()]
    assert not any(CartProblem.from_dict(cart).simple for cart in carts)
    _check_exact(carts)
    # The threshold only reached across two nodes of one merchant: both its parcels ship.
    solution = solve_batch([CartProblem.from_dict(carts[1])], device="cpu").solutions[0]
    assert _answer(solution) == {"x": ("big", "hamburg"), "y": ("big", "munich")}
    assert solution.total == 5500


def test_v2_batch_money_near_the_limit_stays_exact():
    _check_exact([v2_cases.limit_cart(), *v2_cases.huge_money_carts(4)])


def test_answers_carry_price_assignments_parcels_and_nodes():
    carts = [v2_cases.small_v2_cart(seed, 5) for seed in range(12)]
    problems = [CartProblem.from_dict(cart) for cart in carts]
    solutions = solve_batch(problems, device="cpu").solutions
    for problem, solution in zip(problems, solutions, strict=True):
        assert solution is not None
        assignment = {
            line: [merchant, solution.nodes[line]] for line, merchant in solution.assignment.items()
        }
        want = price_assignment(problem, assignment)
        assert solution.breakdown == want
        assert solution.total == sum(c.cost for c in want)
        for cost in solution.breakdown:
            for parcel in cost.parcels:
                assert all(solution.nodes[line] == parcel.node for line in parcel.lines)


@pytest.mark.parametrize("prefer", [None, FULL, DP])
def test_a_mixed_batch_answers_each_cart_as_the_per_cart_solver(prefer):
    carts = []
    for seed in range(16):
        if seed % 3 == 0:
            carts.append(simple_cart(seed, 5))
        else:
            carts.append(v2_cases.small_v2_cart(seed, 3 + seed % 5))
    problems = [CartProblem.from_dict(cart) for cart in carts]
    assert {p.simple for p in problems} == {True, False}
    result = solve_problems(problems, device="cpu", prefer=prefer)
    assert len(result.solutions) == len(problems)
    for problem, solution in zip(problems, result.solutions, strict=True):
        alone = solve(problem, algorithm="cpu-full")
        assert solution is not None and solution.total == alone.total
        assert set(solution.assignment) == set(problem.item_ids)
    # The simple carts' answers are the version 1 batch's, cart for cart.
    simple = [p for p in problems if p.simple]
    v1 = solve_problems(simple, device="cpu", prefer=prefer).solutions
    got = [s for p, s in zip(problems, result.solutions, strict=True) if p.simple]
    assert [(s.total, s.assignment, s.breakdown, s.algorithm) for s in got] == [
        (s.total, s.assignment, s.breakdown, s.algorithm) for s in v1
    ]


def test_too_large_v2_carts_are_flagged_never_answered():
    big = random_v2_cart(3, 24, offers=(3, 4), max_nodes=3)
    small = v2_cases.small_v2_cart(4, 4)
    problems = [CartProblem.from_dict(big), CartProblem.from_dict(small)]
    assert not problems[0].simple and problems[0].complexity > 2**26
    result = solve_batch(problems, device="cpu")
    assert result.solutions[0] is None
    assert result.solutions[1] is not None
    assert result.solutions[1].total == reference_brute_force_v2(small)[0]
    # A budget below a cart's steps flags it; its total and lines stay -1.
    answers = solve_v2(problems[1:], where="cpu", max_work=problems[1].complexity - 1)
    assert answers.method.tolist() == [TOO_LARGE]
    assert answers.total.tolist() == [-1]
    assert (answers.choice == -1).all()


def test_a_batch_of_one_line_offers_is_priced_as_is():
    cart = random_v2_cart(11, 5, max_nodes=3)
    seen: set[str] = set()
    cart["offers"] = [o for o in cart["offers"] if not (o["item"] in seen or seen.add(o["item"]))]
    for offer in cart["offers"]:
        offer["stock"] = None
    _check_exact([cart] * 3)


def test_empty_and_simple_only_batches_keep_the_version_1_path():
    assert solve_batch([], device="cpu").solutions == []
    problems = [CartProblem.from_dict(simple_cart(seed, 4)) for seed in range(5)]
    batch = pack_problems(problems)
    raw = solve_packed(batch, device="cpu")
    got = solve_batch(problems, device="cpu").solutions
    assert [s.total for s in got] == raw.total.tolist()


def test_pack_problems_packs_simple_carts_only():
    with pytest.raises(FulfillmentUnsupported):
        pack_problems([CartProblem.from_dict(v2_cases.tier_tipping_cart())])


def test_multi_device_batch_takes_v2_carts():
    from gpu_engine.batch.engine import solve_packed as packed_solver

    carts = [simple_cart(1, 4), v2_cases.small_v2_cart(2, 5), v2_cases.tied_cart()]
    problems = [CartProblem.from_dict(cart) for cart in carts]
    got = solve_batch_multi(
        problems,
        device_ids=[0, 1],
        share_solver=lambda share, device_id: packed_solver(share, device="cpu"),
    )
    want = solve_batch(problems, device="cpu")
    assert [s.total for s in got.solutions] == [s.total for s in want.solutions]
    assert np.all([s.optimal for s in got.solutions])


def wide_cart(merchants: int, nodes: int) -> dict:
    """One line sold at every node of every merchant (weight tiers: not simple)."""
    tiers = [{"up_to_g": 1000, "fee": 100}]
    shipping = {"per_extra_unit": 0, "weight_tiers": tiers}
    return {
        "items": [{"id": "a", "quantity": 1, "weight_g": 500}],
        "merchants": [
            {
                "id": f"m{m}",
                "nodes": [
                    {"id": f"n{k}", "shipping": {**shipping, "base_fee": m + k}}
                    for k in range(nodes)
                ],
            }
            for m in range(merchants)
        ],
        "offers": [
            {"item": "a", "merchant": f"m{m}", "node": f"n{k}", "price": 100, "stock": None}
            for m in range(merchants)
            for k in range(nodes)
        ],
    }


def test_carts_past_a_threads_columns_or_merchants_are_flagged():
    from gpu_engine.batch.v2_pack import MAX_V2_COLUMNS, MAX_V2_OWNERS

    past = [wide_cart(MAX_V2_OWNERS + 1, 1), wide_cart(1, MAX_V2_COLUMNS + 1)]
    fits = [wide_cart(MAX_V2_OWNERS, 1), wide_cart(1, MAX_V2_COLUMNS)]
    problems = [CartProblem.from_dict(cart) for cart in past + fits]
    assert not any(p.simple for p in problems)
    solutions = solve_batch(problems, device="cpu").solutions
    assert solutions[:2] == [None, None]
    # Cheapest: the price, m0/n0's base fee 0 and its first tier's 100.
    assert [s.total for s in solutions[2:]] == [200, 200]
