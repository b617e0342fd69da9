"""The subset DP on version 2 carts (several nodes a merchant, weight tiers), on the CPU: exact
against the spec's brute force, on random carts and on carts built to be hard."""

import time

import numpy as np
import pytest

from gpu_engine import CartProblem, solve
from gpu_engine.fuzz.v2_carts import random_v2_cart
from gpu_engine.pricing import total_of
from gpu_engine.problem import CapacityError
from gpu_engine.reference import reference_brute_force_v2, reference_cost_v2
from gpu_engine.solvers.dp.owner_inputs import MAX_OWNER_STATES, owner_dp_inputs
from gpu_engine.solvers.dp.solve_v2 import run_owner_cpu, run_relaxed_v2


def _node(node_id, base, extra=0, tiers=None, per_kg=0):
    shipping = {"base_fee": base, "per_extra_unit": extra}
    if tiers:
        shipping["weight_tiers"] = [{"up_to_g": u, "fee": f} for u, f in tiers]
        shipping["per_kg_over"] = per_kg
    return {"id": node_id, "shipping": shipping}


def _merchant(mid, nodes, free_over=None, discount=None):
    out = {"id": mid, "nodes": nodes}
    if free_over is not None:
        out["free_over"] = free_over
    if discount is not None:
        out["discount"] = {"min_units": discount[0], "basis_points": discount[1]}
    return out


def _offer(item, merchant, node, price, stock=None):
    return {"item": item, "merchant": merchant, "node": node, "price": price, "stock": stock}


def _check_exact(cart):
    """cpu-dp's answer is the brute force's total, proven, priced so by the spec's reference;
    the exact owner DP alone agrees, and the relaxed DP brackets it."""
    problem = CartProblem.from_dict(cart)
    best, _ = reference_brute_force_v2(cart)
    solution = solve(problem, algorithm="cpu-dp")
    assert solution.total == best and solution.optimal
    picked = {line: (solution.assignment[line], solution.nodes[line]) for line in cart_lines(cart)}
    assert reference_cost_v2(cart, picked) == best
    inputs = owner_dp_inputs(problem)
    total, entries = run_owner_cpu(inputs)
    choice = inputs.choice(problem.n_items, entries)
    assert total == best == total_of(problem, choice)
    bound, merged, priced = run_relaxed_v2(problem)
    assert bound <= best <= priced == total_of(problem, merged)
    return solution


def cart_lines(cart):
    return [item["id"] for item in cart["items"]]


@pytest.mark.parametrize("seed", range(60))
def test_random_v2_carts_equal_brute_force(seed):
    _check_exact(random_v2_cart(seed, 3 + seed % 5))


@pytest.mark.parametrize("seed", range(12))
def test_one_merchant_many_nodes_and_few_sellers(seed):
    # Few merchants with three nodes each: most lines bound to one merchant, split over nodes.
    _check_exact(random_v2_cart(1000 + seed, 6 + seed % 2, n_merchants=2, offers=(1, 2)))


@pytest.mark.parametrize("cents", [1, 3 * 10**15])
@pytest.mark.parametrize("seed", range(8))
def test_money_extremes(seed, cents):
    # cents=1: fees and prices of a few cents (floors bite); 3e15: totals near the service's
    # int64 bound (every cart here is accepted by the problem's money check).
    _check_exact(random_v2_cart(2000 + seed, 3 + seed % 4, cents=cents))


def test_threshold_reached_only_across_two_nodes_of_one_merchant():
    # A's free shipping (5000) needs both lines, which A stocks at different nodes; per node A
    # pays 800 a parcel. B ships both for 5800 + 500.
    cart = {
        "items": [{"id": "a", "quantity": 1}, {"id": "b", "quantity": 1}],
        "merchants": [
            _merchant("A", [_node("n0", 800), _node("n1", 800)], free_over=5000),
            _merchant("B", [_node("n0", 500)]),
        ],
        "offers": [
            _offer("a", "A", "n0", 3000),
            _offer("b", "A", "n1", 3000),
            _offer("a", "B", "n0", 2900),
            _offer("b", "B", "n0", 2900),
        ],
    }
    solution = _check_exact(cart)
    assert solution.total == 6000
    assert solution.nodes == {"a": "n0", "b": "n1"}


def test_heavy_item_tipping_a_parcel_into_the_next_tier_splits_over_nodes():
    # Together the two 3 kg items weigh 6 kg: tier 2 (900) at either node; one at each node
    # costs two parcels of 100 in tier 1. B is dearer on goods.
    tiers = [(5000, 0), (10000, 900)]
    cart = {
        "items": [
            {"id": "x", "quantity": 1, "weight_g": 3000},
            {"id": "y", "quantity": 1, "weight_g": 3000},
        ],
        "merchants": [
            _merchant("A", [_node("n0", 100, tiers=tiers), _node("n1", 100, tiers=tiers)]),
            _merchant("B", [_node("n0", 0)]),
        ],
        "offers": [
            *(_offer(i, "A", n, 1000) for i in ("x", "y") for n in ("n0", "n1")),
            _offer("x", "B", "n0", 1300),
            _offer("y", "B", "n0", 1300),
        ],
    }
    solution = _check_exact(cart)
    assert solution.total == 2200
    assert solution.nodes["x"] != solution.nodes["y"]


def test_discount_counts_every_node_and_may_drop_goods_under_the_threshold():
    # A's 10% discount from 3 units counts both nodes; with it the goods fall under free_over.
    cart = {
        "items": [{"id": f"i{k}", "quantity": 1, "weight_g": 1500 * k} for k in range(4)],
        "merchants": [
            _merchant(
                "A",
                [_node("n0", 390, 50, tiers=[(2000, 0), (4000, 300)], per_kg=120), _node("n1", 0)],
                free_over=5000,
                discount=(3, 1000),
            ),
            _merchant("B", [_node("n0", 450, 0, tiers=[(3000, 100)], per_kg=200)], free_over=4000),
        ],
        "offers": [
            *(_offer(f"i{k}", "A", "n0", 1400 + 10 * k) for k in range(4)),
            *(_offer(f"i{k}", "A", "n1", 1450, stock=k % 2) for k in range(4)),
            *(_offer(f"i{k}", "B", "n0", 1390 + 20 * k) for k in range(4)),
        ],
    }
    _check_exact(cart)


def test_ties_between_identical_nodes_give_one_proven_total():
    nodes = [_node("n0", 300, 100), _node("n1", 300, 100), _node("n2", 300, 100)]
    cart = {
        "items": [{"id": f"i{k}", "quantity": 1 + k % 2, "weight_g": 400} for k in range(5)],
        "merchants": [_merchant("A", nodes, free_over=9000), _merchant("B", nodes[:1])],
        "offers": [
            *(_offer(f"i{k}", "A", n["id"], 1000) for k in range(5) for n in nodes),
            *(_offer(f"i{k}", "B", "n0", 1000) for k in range(5)),
        ],
    }
    first = _check_exact(cart)
    assert solve(CartProblem.from_dict(cart), algorithm="cpu-dp").total == first.total


def test_line_one_merchant_sells_at_two_nodes_is_placed_inside_its_table():
    # z is bound to A (only A sells it) but may ship from either node: from n1 it joins w's
    # parcel and saves a parcel fee; folding z into a fixed node would lose that.
    cart = {
        "items": [{"id": "z", "quantity": 2}, {"id": "w", "quantity": 1}],
        "merchants": [
            _merchant("A", [_node("n0", 700), _node("n1", 200)]),
            _merchant("B", [_node("n0", 250)]),
        ],
        "offers": [
            _offer("z", "A", "n0", 500),
            _offer("z", "A", "n1", 520),
            _offer("w", "A", "n1", 800),
            _offer("w", "B", "n0", 760),
        ],
    }
    problem = CartProblem.from_dict(cart)
    inputs = owner_dp_inputs(problem)
    assert inputs.k == 1  # only w is a DP line
    solution = _check_exact(cart)
    assert solution.nodes["z"] == "n1"


def test_an_owner_with_too_many_placements_is_refused_naming_the_cart():
    # 12 lines that A sells at 3 nodes and B too: 4^12 placements of A's lines.
    n = 12
    nodes = [_node(f"n{j}", 100 * j) for j in range(3)]
    cart = {
        "items": [{"id": f"i{k}", "quantity": 1} for k in range(n)],
        "merchants": [_merchant("A", nodes), _merchant("B", [_node("n0", 0)])],
        "offers": [
            *(_offer(f"i{k}", "A", f"n{j}", 900) for k in range(n) for j in range(3)),
            *(_offer(f"i{k}", "B", "n0", 950) for k in range(n)),
        ],
    }
    problem = CartProblem.from_dict(cart)
    assert 4**n > MAX_OWNER_STATES
    with pytest.raises(CapacityError) as refused:
        solve(problem, algorithm="cpu-dp")
    assert refused.value.field == "items" and refused.value.value == n
    assert "12-line cart" in refused.value.reason and "'A'" in refused.value.reason
    # One line fewer fits: 4^11 placements.
    smaller = CartProblem.from_dict(
        {
            **cart,
            "items": cart["items"][:-1],
            "offers": [o for o in cart["offers"] if o["item"] != f"i{n - 1}"],
        }
    )
    assert owner_dp_inputs(smaller).placements == 4 ** (n - 1) + 2 ** (n - 1)


def test_simple_carts_keep_the_version_1_path():
    cart = {
        "items": [{"id": "a", "quantity": 1}, {"id": "b", "quantity": 2}],
        "merchants": [
            {"id": "A", "shipping": {"base_fee": 0, "per_extra_unit": 1000}},
            {"id": "B", "shipping": {"base_fee": 0, "per_extra_unit": 0}},
        ],
        "offers": [
            {"item": i, "merchant": m, "price": p, "stock": None}
            for i, m, p in (("a", "A", 100), ("b", "A", 100), ("a", "B", 150), ("b", "B", 150))
        ],
    }
    problem = CartProblem.from_dict(cart)
    assert problem.simple
    solution = solve(problem, algorithm="cpu-dp")
    assert "placements" not in solution.stats and solution.optimal


def test_relaxed_path_proves_dense_subadditive_v2_carts_and_falls_back_otherwise():
    # Every line at both merchants, flat parcels, no thresholds: the relaxed DP's partition,
    # merged, prices at its bound.
    nodes = [_node("n0", 300), _node("n1", 350)]
    cart = {
        "items": [{"id": f"i{k}", "quantity": 1, "weight_g": 100} for k in range(6)],
        "merchants": [_merchant("A", nodes), _merchant("B", nodes)],
        "offers": [
            _offer(f"i{k}", m, n["id"], 1000 + 37 * k * (1 if m == "A" else -1))
            for k in range(6)
            for m in ("A", "B")
            for n in nodes
        ],
    }
    solution = _check_exact(cart)
    assert solution.stats["path"] == "relaxed-partition"
    # Per extra unit far over the base fee: two parcels at one merchant beat one, so the
    # relaxed partition (groups of one owner priced apart) is below any real assignment.
    heavy = [_node("n0", 0, 5000)]
    cart = {
        "items": [{"id": f"i{k}", "quantity": 1} for k in range(4)],
        "merchants": [_merchant("A", heavy), _merchant("B", [_node("n0", 0, 0, [(0, 1)])])],
        "offers": [
            *(_offer(f"i{k}", "A", "n0", 100) for k in range(4)),
            *(_offer(f"i{k}", "B", "n0", 180) for k in range(4)),
        ],
    }
    solution = _check_exact(cart)
    assert solution.stats["path"] == "merchant-dp" and "fallback" in solution.stats


def test_a_deadline_already_past_cuts_both_dps():
    problem = CartProblem.from_dict(random_v2_cart(7, 6))
    assert run_owner_cpu(owner_dp_inputs(problem), at=time.perf_counter() - 1) is None
    assert run_relaxed_v2(problem, at=time.perf_counter() - 1) is None


def test_tables_hold_the_cheapest_split_of_every_line_set():
    # Each entry of every owner's table equals the brute force over that owner's placements.
    cart = random_v2_cart(31, 5, n_merchants=2)
    problem = CartProblem.from_dict(cart)
    inputs = owner_dp_inputs(problem, every_line_free=True)
    f = problem.fulfillment
    for row in range(inputs.owners.size):
        for entry in range(1 << int(inputs.n_free[row])):
            placed = inputs.placement(row, entry)
            lines = sorted(line for line, _ in placed)
            assert lines == sorted(
                int(inputs.line_of[row, b])
                for b in range(int(inputs.n_free[row]))
                if entry >> b & 1
            )
            if not lines:
                continue
            owner = f.owner_ids[int(inputs.owners[row])]
            best = min(
                reference_cost_v2(
                    _only(cart, owner, [problem.item_ids[i] for i in lines]),
                    dict(zip([problem.item_ids[i] for i in lines], picks, strict=True)),
                )
                for picks in _placements(cart, owner, [problem.item_ids[i] for i in lines])
            )
            assert int(inputs.cost[int(inputs.table_off[row]) + entry]) == best


def _only(cart, owner, lines):
    return {
        "items": [i for i in cart["items"] if i["id"] in lines],
        "merchants": [m for m in cart["merchants"] if m["id"] == owner],
        "offers": [o for o in cart["offers"] if o["merchant"] == owner and o["item"] in lines],
    }


def _placements(cart, owner, lines):
    import itertools

    quantity = {i["id"]: i["quantity"] for i in cart["items"]}
    options = [
        [
            (owner, o["node"])
            for o in cart["offers"]
            if o["item"] == line
            and o["merchant"] == owner
            and (o["stock"] is None or o["stock"] >= quantity[line])
        ]
        for line in lines
    ]
    return itertools.product(*options)


def test_choice_covers_every_line_once():
    problem = CartProblem.from_dict(random_v2_cart(5, 7))
    inputs = owner_dp_inputs(problem)
    _total, entries = run_owner_cpu(inputs)
    choice = inputs.choice(problem.n_items, entries)
    assert (choice >= 0).all()
    assert (problem.price[np.arange(problem.n_items), choice] >= 0).all()


@pytest.mark.parametrize("seed", range(6))
def test_relaxed_placements_are_counted_without_building_the_tables(seed):
    from gpu_engine.solvers.dp.owner_inputs import owner_rows, relaxed_placements

    problem = CartProblem.from_dict(random_v2_cart(400 + seed, 4 + seed))
    built = owner_dp_inputs(problem, every_line_free=True)
    assert relaxed_placements(problem) == built.placements
    assert owner_rows(problem, every_line_free=True).placements == built.placements
    assert relaxed_placements(problem, max_states=1) is None


def test_too_many_shared_lines_are_refused_before_any_table_is_priced(monkeypatch):
    # 32 lines, each sold by two neighbouring merchants of two nodes: small tables, but the DP
    # over 2^32 line sets does not fit; refused without pricing a placement.
    import gpu_engine.solvers.dp.solve_v2 as solve_v2

    n = 32
    nodes = [_node("n0", 300), _node("n1", 200, tiers=[(1000, 0), (5000, 250)])]
    cart = {
        "items": [{"id": f"i{k}", "quantity": 1, "weight_g": 700} for k in range(n)],
        "merchants": [_merchant(f"m{k}", nodes) for k in range(n)],
        "offers": [
            _offer(f"i{k}", f"m{(k + d) % n}", node["id"], 1000 + d)
            for k in range(n)
            for d in (0, 1)
            for node in nodes
        ],
    }

    def never(*_args, **_kwargs):
        raise AssertionError("tables priced for a cart the DP refuses")

    monkeypatch.setattr(solve_v2, "owner_tables_of", never)
    with pytest.raises(CapacityError) as refused:
        solve(CartProblem.from_dict(cart), algorithm="cpu-dp")
    assert refused.value.value == n and "32 lines that several merchants sell" in str(refused.value)
