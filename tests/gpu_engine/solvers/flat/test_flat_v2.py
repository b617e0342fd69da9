"""The flat-cart solver on version 2 carts (nodes as facilities): the UFL prices every assignment
as the spec's reference does wherever the cart is accepted, answers are the brute force's
optimum with nodes and parcels, refusals name the merchant or node and the reason, and version 1
carts are read as before."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_engine import CartProblem
from gpu_engine.fuzz.draw import fuzz_cart
from gpu_engine.problem import MONEY_LIMIT, CapacityError, FulfillmentUnsupported
from gpu_engine.reference import reference_brute_force_v2, reference_cost_v2
from gpu_engine.solvers.flat.data import _merchant_terms, flat_data, is_flat
from gpu_engine.solvers.flat.nodes import _weight_term, column_terms
from gpu_engine.solvers.flat.solve import solve_flat, solve_flat_solution
from tests.gpu_engine.strategies import carts


def node(nid, base, per=0, tiers=None, per_kg=None):
    shipping = {"base_fee": base, "per_extra_unit": per}
    if tiers is not None:
        shipping["weight_tiers"] = [{"up_to_g": up, "fee": fee} for up, fee in tiers]
    if per_kg is not None:
        shipping["per_kg_over"] = per_kg
    return {"id": nid, "shipping": shipping}


def merchant(mid, nodes, free_over=None, discount=None):
    out = {"id": mid, "nodes": nodes, "free_over": free_over}
    if discount is not None:
        out["discount"] = {"min_units": discount[0], "basis_points": discount[1]}
    return out


def offer(item, mid, nid, price, stock=None):
    return {"item": item, "merchant": mid, "node": nid, "price": price, "stock": stock}


def item(iid, quantity=1, weight=0):
    return {"id": iid, "quantity": quantity, "weight_g": weight}


_RATES = st.sampled_from(
    [
        None,  # no tiers
        ([(10**6, 250)], None),  # one tier holding every parcel
        ([(500, 120), (10**6, 120)], 40),  # tiers of one fee
        ([(0, 300)], 0),  # past the last tier, no fee a kilogram
        ([(0, 300)], 70),  # per whole kilogram (flat only where every line weighs whole kilos)
        ([(1500, 200)], 100),  # a started kilogram past 1.5 kg
        ([(2000, 100), (5000, 300)], 50),  # tiers a parcel may cross
    ]
)


@st.composite
def flat_v2_carts(draw: st.DrawFn) -> dict:
    """Mostly flat version 2 carts at the edges of flatness: 1-3 nodes a merchant, weight fees
    constant over every parcel or per whole kilogram, per > base paid by a tier's fee, rules out
    of reach, 0 bp or met by every shipment; now and then a cart that is not flat."""
    kilos = draw(st.booleans())
    weights = [0, 1000, 2000, 5000] if kilos else [0, 1, 999, 1000, 1001, 1600, 4000]
    items = [
        item(f"i{i}", draw(st.integers(1, 3)), draw(st.sampled_from(weights)))
        for i in range(draw(st.integers(1, 4)))
    ]
    merchants = []
    for m in range(draw(st.integers(1, 3))):
        nodes = []
        for k in range(draw(st.integers(1, 3))):
            per = draw(st.sampled_from([0, 0, 50, 100]))
            base = max(0, per + draw(st.sampled_from([0, 0, 150, 499, -30])))
            rate = draw(_RATES)
            tiers, per_kg = rate if rate is not None else (None, None)
            nodes.append(node(f"n{k}", base, per, tiers, per_kg))
        free_over = draw(st.sampled_from([None, None, None, 0, 10**9, 3000]))
        discount = draw(st.sampled_from([None, None, None, (50, 2000), (1, 0), (2, 1000)]))
        merchants.append(merchant(f"m{m}", nodes, free_over, discount))
    offers = []
    for it in items:
        sellers = draw(st.lists(st.sampled_from(merchants), min_size=1, max_size=2, unique_by=id))
        for seller in sellers:
            price = draw(st.sampled_from([0, 1, 250, 999, 3000]) | st.integers(0, 2000))
            picked = draw(st.lists(st.sampled_from(seller["nodes"]), min_size=1, unique_by=id))
            for nd in picked:
                node_price = price + draw(st.sampled_from([0, 0, 1, 40]))
                stock = draw(st.sampled_from([None, None, 0, it["quantity"]]))
                offers.append(offer(it["id"], seller["id"], nd["id"], node_price, stock))
        offers[-1]["stock"] = None  # the line keeps an eligible offer
    return {"items": items, "merchants": merchants, "offers": offers}


def _column_picks(problem: CartProblem) -> list[tuple[str, str]]:
    f = problem.fulfillment
    return [(f.owner_ids[int(o)], n) for o, n in zip(f.column_owner, f.node_ids, strict=True)]


def _check_v2(cart: dict) -> bool:
    """Accepted: the UFL prices every assignment as the reference does and the answer is the
    brute force's optimum, proven, with its nodes and parcels. Refused: with the error type of
    the cart's version, naming the reason. True when accepted."""
    problem = CartProblem.from_dict(cart)
    if not is_flat(problem):
        kind = CapacityError if problem.simple else FulfillmentUnsupported
        with pytest.raises(kind) as refused:
            solve_flat_solution(problem)
        assert "(algorithm flat)" in refused.value.reason
        assert problem.simple or refused.value.field.startswith("merchants[")
        return False
    data = flat_data(problem)
    columns = _column_picks(problem)
    rows = np.arange(problem.n_items)
    for choice in itertools.product(*(np.flatnonzero(row >= 0) for row in problem.price)):
        picks = {problem.item_ids[i]: columns[c] for i, c in enumerate(choice)}
        ufl = int(data.fee[np.unique(choice)].sum() + data.cost[rows, list(choice)].sum())
        assert ufl == reference_cost_v2(cart, picks)
    best, _ = reference_brute_force_v2(cart)
    solution = solve_flat_solution(problem)
    assert solution.optimal and solution.total == best and solution.algorithm == "flat"
    picks = {line: (m, solution.nodes[line]) for line, m in solution.assignment.items()}
    assert reference_cost_v2(cart, picks) == best
    for cost in solution.breakdown:
        parcel_lines = sorted(line for p in cost.parcels for line in p.lines)
        assert parcel_lines == sorted(cost.lines)
        assert all(solution.nodes[line] == p.node for p in cost.parcels for line in p.lines)
        assert cost.shipping == sum(p.fee for p in cost.parcels)
    return True


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(flat_v2_carts())
def test_flat_v2_carts_are_priced_as_the_spec_and_solved_to_the_brute_force_optimum(cart):
    _check_v2(cart)


def test_the_fuzz_flat_shape_is_taken_and_solved_to_the_brute_force_optimum():
    taken = split = 0
    for index in range(40):
        cart = fuzz_cart(29, index, ("v2-flat",)).cart
        assert cart is not None
        if _check_v2(cart):
            taken += 1
            problem = CartProblem.from_dict(cart)
            split += any(len(c.parcels) > 1 for c in solve_flat_solution(problem).breakdown)
    assert taken >= 30 and split >= 1


def _three_warehouses(**kwargs) -> dict:
    """A ships from three nodes: n0 cheap to open and dear a unit, n1 the reverse, n2 the
    only one with stock of c. B sells a and b for a little more, from one parcel."""
    return {
        "items": [item("a", 2), item("b", 1), item("c", 1)],
        "merchants": [
            merchant("A", [node("n0", 100, 100), node("n1", 600, 0), node("n2", 300, 0)]),
            merchant("B", [node("w", 700, 0)]),
        ],
        "offers": [
            *(offer(i, "A", n, 1000) for i in ("a", "b") for n in ("n0", "n1")),
            offer("c", "A", "n2", 1000),
            offer("a", "B", "w", 1010),
            offer("b", "B", "w", 1010),
        ],
        **kwargs,
    }


def test_a_merchant_with_three_nodes_joins_lines_in_one_parcel_and_splits_for_stock():
    cart = _three_warehouses()
    assert _check_v2(cart)
    solution = solve_flat_solution(CartProblem.from_dict(cart))
    # a and b (3 units) from n0: 100 + 2 x 100 = 300, cheaper than n1's 600; c only at n2.
    assert solution.total == 4000 + 300 + 300
    assert solution.nodes == {"a": "n0", "b": "n0", "c": "n2"}
    (a_cost,) = solution.breakdown
    assert [(p.node, p.units, p.fee) for p in a_cost.parcels] == [("n0", 3, 300), ("n2", 1, 300)]


def test_tied_nodes_give_the_optimum_with_one_parcel():
    cart = {
        "items": [item("a", 1, 700), item("b", 2, 300)],
        "merchants": [merchant("A", [node(n, 450, 0, [(10**4, 50)]) for n in ("x", "y")])],
        "offers": [offer(i, "A", n, 999) for i in ("a", "b") for n in ("x", "y")],
    }
    assert _check_v2(cart)
    solution = solve_flat_solution(CartProblem.from_dict(cart))
    assert solution.total == 3 * 999 + 500 and len(set(solution.nodes.values())) == 1


def test_one_cent_amounts():
    cart = {
        "items": [item("a", 1, 1), item("b", 1, 1)],
        "merchants": [
            merchant("A", [node("x", 1, 1, [(2, 1)]), node("y", 1, 0)]),
            merchant("B", [node("z", 0, 0)]),
        ],
        "offers": [
            offer("a", "A", "x", 1),
            offer("b", "A", "x", 1),
            offer("a", "A", "y", 0),
            offer("b", "B", "z", 2),
        ],
    }
    assert _check_v2(cart)
    # a at y (0 + 1 fee), b at z (2): 3; both at x cost 2 + 1 + 1 + 1 = 5.
    assert solve_flat(CartProblem.from_dict(cart)).total == 3


def test_money_near_the_service_limit_is_exact():
    big = MONEY_LIMIT // 16
    cart = {
        "items": [item("a", 1, 2000), item("b", 1, 3000)],
        "merchants": [
            merchant("A", [node("x", big, 0, [(0, big // 2)], 7), node("y", big + 1, 1)]),
            merchant("B", [node("z", 3, 0)], free_over=4 * big),
        ],
        "offers": [
            offer("a", "A", "x", big),
            offer("b", "A", "x", big + 3),
            offer("a", "A", "y", big - 1),
            offer("b", "B", "z", big + 5),
        ],
    }
    assert _check_v2(cart)
    result = solve_flat(CartProblem.from_dict(cart))
    # a from y (its fee and a unit of 1 cent), b from B: 2 big + (big + 5 + 3).
    assert result.optimal and result.total == 3 * big + 8


def test_weight_fee_per_whole_kilogram_is_a_cost_per_line():
    # 3 EUR a parcel plus 1 EUR a started kilogram, every line whole kilograms: flat.
    cart = {
        "items": [item("tv", 1, 12_000), item("cable", 3, 1000), item("lamp", 1, 0)],
        "merchants": [
            merchant("A", [node("x", 0, 0, [(0, 300)], 100), node("y", 200, 0, [(0, 300)], 100)]),
            merchant("B", [node("z", 800, 0)]),
        ],
        "offers": [
            *(offer(i, "A", "x", p) for i, p in (("tv", 30_000), ("cable", 500))),
            *(offer(i, "A", "y", p) for i, p in (("cable", 450), ("lamp", 2000))),
            *(offer(i, "B", "z", p) for i, p in (("tv", 31_000), ("lamp", 2100))),
        ],
    }
    assert _check_v2(cart)
    data = flat_data(CartProblem.from_dict(cart))
    assert data.fee.tolist() == [300, 500, 800]


def test_a_parcel_exactly_at_a_tier_edge_is_flat_and_a_gram_over_is_refused():
    cart = {
        "items": [item("a", 2, 1500), item("b", 1, 2000)],
        "merchants": [merchant("A", [node("x", 300, 0, [(5000, 0), (9000, 400)], 90)])],
        "offers": [offer("a", "A", "x", 800), offer("b", "A", "x", 900)],
    }
    assert _check_v2(cart)  # every parcel weighs 2000..5000 g: tier 1
    cart["items"][1]["weight_g"] = 2001
    problem = CartProblem.from_dict(cart)
    with pytest.raises(FulfillmentUnsupported) as refused:
        solve_flat(problem)
    assert refused.value.field == "merchants[0].nodes[0].shipping.weight_tiers"
    assert refused.value.value == ("A", "x") and "weight tier" in refused.value.reason


def test_per_extra_unit_above_base_is_flat_where_the_weight_fee_pays_the_difference():
    rate = node("x", 100, 250, [(10**5, 150)])  # opening 100 - 250 + 150 = 0
    cart = {
        "items": [item("a", 2, 10), item("b", 1, 10)],
        "merchants": [merchant("A", [rate]), merchant("B", [node("y", 400, 0), node("z", 0, 0)])],
        "offers": [
            offer("a", "A", "x", 500),
            offer("b", "A", "x", 700),
            offer("a", "B", "y", 520),
            offer("b", "B", "z", 800),
        ],
    }
    assert _check_v2(cart)
    assert flat_data(CartProblem.from_dict(cart)).fee[0] == 0
    rate["shipping"]["weight_tiers"][0]["fee"] = 149
    with pytest.raises(FulfillmentUnsupported) as refused:
        solve_flat(CartProblem.from_dict(cart))
    assert refused.value.field == "merchants[0].nodes[0].shipping"
    assert "negative opening cost" in refused.value.reason


def test_a_merchant_whose_every_shipment_ships_free_may_have_any_weight_fee():
    cart = _three_warehouses()
    cart["items"][0]["weight_g"] = 1234
    cart["merchants"][0]["nodes"][1] = node("n1", 600, 0, [(100, 0), (5000, 900)], 55)
    cart["merchants"][0]["free_over"] = 1000  # every line's goods reach it
    assert _check_v2(cart)
    assert solve_flat(CartProblem.from_dict(cart)).total == 4000


def _dense_v2(seed: int, n: int = 16, m: int = 6) -> CartProblem:
    """Every line at both nodes of every merchant; a node's fee comparable to a line's price,
    plus a fee per whole kilogram: the dual ascent's bound is often below the optimum here."""
    rng = np.random.default_rng(seed)
    merchants = [
        merchant(
            f"m{j}",
            [
                node(
                    f"n{k}", int(rng.integers(1000, 3000)), 0, [(0, 100)], int(rng.integers(0, 50))
                )
                for k in range(2)
            ],
        )
        for j in range(m)
    ]
    items = [item(f"i{i}", 1, 1000 * int(rng.integers(0, 4))) for i in range(n)]
    offers = [
        offer(f"i{i}", f"m{j}", f"n{k}", int(rng.integers(1000, 2000)))
        for i in range(n)
        for j in range(m)
        for k in range(2)
    ]
    return CartProblem.from_dict({"items": items, "merchants": merchants, "offers": offers})


def _open_set_optimum(problem: CartProblem) -> int:
    """The UFL optimum over every set of open nodes."""
    data = flat_data(problem)
    columns = range(data.n_merchants)
    return min(
        int(data.fee[list(s)].sum() + data.cost[:, list(s)].min(axis=1).sum())
        for r in range(1, data.n_merchants + 1)
        for s in itertools.combinations(columns, r)
    )


# Seeds of dense carts where the root's answer is above the optimum.
@pytest.mark.parametrize("seed", [3, 17, 27])
def test_branch_and_bound_over_nodes_finds_and_proves_the_optimum(seed):
    problem = _dense_v2(seed)
    assert not problem.simple and flat_data(problem).n_merchants == 12
    best = _open_set_optimum(problem)
    root = solve_flat(problem, max_nodes=0)
    assert not root.optimal and root.bound < best < root.total
    solution = solve_flat_solution(problem, budget_ms=5000)
    assert solution.optimal and solution.total == best and solution.gap == 0.0
    assert solution.stats["proof"] == "branch and bound"


def _refusal(cart: dict) -> FulfillmentUnsupported:
    problem = CartProblem.from_dict(cart)
    assert not problem.simple and not is_flat(problem)
    with pytest.raises(FulfillmentUnsupported) as refused:
        solve_flat_solution(problem)
    assert "(algorithm flat)" in refused.value.reason
    return refused.value


def test_refusals_name_the_merchant_or_node_and_the_reason():
    discount = _refusal({**_three_warehouses(), "merchants": [
        merchant("A", _three_warehouses()["merchants"][0]["nodes"], discount=(4, 500)),
        _three_warehouses()["merchants"][1],
    ]})  # fmt: skip
    assert discount.field == "merchants[0].discount" and discount.value == "A"
    # A's threshold is reached only by lines from two of its nodes (c is at n2 alone).
    cart = _three_warehouses()
    cart["merchants"][0]["free_over"] = 3500
    threshold = _refusal(cart)
    assert threshold.field == "merchants[0].free_over" and "threshold" in threshold.reason
    # A started kilogram: at w, b alone weighs 0 g (tier fee 0), a 1.6 kg (40 past 1 kg).
    cart = _three_warehouses()
    cart["items"][0]["weight_g"] = 800
    cart["merchants"][1]["nodes"][0] = node("w", 700, 0, [(1000, 0)], 40)
    kilo = _refusal(cart)
    assert kilo.field == "merchants[1].nodes[0].shipping.weight_tiers"
    assert kilo.value == ("B", "w") and "started kilogram" in kilo.reason


@pytest.mark.parametrize(
    ("rule", "field"),
    [
        ({"discount": {"min_units": 3, "basis_points": 500}}, "merchants[0].discount"),
        ({"free_over": 1500}, "merchants[0].shipping.free_over"),
        ({"base_fee": 100, "per_extra_unit": 200}, "merchants[0].shipping"),
    ],
)
def test_version_1_carts_are_refused_as_before(rule, field):
    shipping = {"base_fee": 499, "per_extra_unit": 0, "free_over": None}
    shipping.update({k: v for k, v in rule.items() if k != "discount"})
    cart = {
        "items": [{"id": "a", "quantity": 2}, {"id": "b", "quantity": 1}],
        "merchants": [{"id": "m", "shipping": shipping, "discount": rule.get("discount")}],
        "offers": [
            {"item": "a", "merchant": "m", "price": 500},
            {"item": "b", "merchant": "m", "price": 700},
        ],
    }
    with pytest.raises(CapacityError) as refused:
        solve_flat(CartProblem.from_dict(cart))
    assert type(refused.value) is CapacityError and refused.value.field == field


def test_a_version_1_cart_and_its_version_2_writing_give_the_same_answer():
    v1: dict[str, list[dict]] = {
        "items": [{"id": f"i{i}", "quantity": 1 + i % 2} for i in range(5)],
        "merchants": [
            {"id": f"m{m}", "shipping": {"base_fee": 300 + 200 * m, "per_extra_unit": 50 * m}}
            for m in range(3)
        ],
        "offers": [
            {"item": f"i{i}", "merchant": f"m{m}", "price": 1000 + 37 * ((i * 7 + m * 3) % 11)}
            for i in range(5)
            for m in range(3)
            if (i + m) % 4
        ],
    }
    v2 = {
        "items": [{**it, "weight_g": 1500} for it in v1["items"]],
        "merchants": [merchant(m["id"], [node("only", **_rate(m))]) for m in v1["merchants"]],
        "offers": [{**o, "node": "only"} for o in v1["offers"]],
    }
    first, second = CartProblem.from_dict(v1), CartProblem.from_dict(v2)
    assert first.simple and second.simple
    a, b = solve_flat_solution(first), solve_flat_solution(second)
    assert a.total == b.total and a.assignment == b.assignment and a.optimal and b.optimal
    assert set(b.nodes.values()) == {"only"} and a.nodes == a.assignment
    assert np.array_equal(flat_data(first).cost, flat_data(second).cost)


def _rate(v1_merchant: dict) -> dict:
    shipping = v1_merchant["shipping"]
    return {"base": shipping["base_fee"], "per": shipping["per_extra_unit"]}


@pytest.mark.parametrize(
    ("tiers", "per_kg", "lightest", "heaviest", "kilos", "term"),
    [
        ([], 0, 0, 10**9, False, (0, 0)),
        ([(5000, 40)], 9, 0, 5000, False, (40, 0)),  # the edge itself is in the tier
        ([(5000, 40)], 9, 0, 5001, False, None),  # a gram over starts a kilogram
        ([(5000, 40)], 0, 0, 10**9, False, (40, 0)),  # no fee a kilogram past the last tier
        ([(5000, 40)], 9, 5001, 6000, False, (49, 0)),  # one started kilogram
        ([(5000, 40)], 9, 5001, 6001, False, None),
        ([(100, 0), (5000, 0)], 9, 0, 5000, False, (0, 0)),  # two tiers of one fee
        ([(100, 0), (5000, 0)], 9, 0, 5000, True, (0, 0)),
        ([(5500, 40)], 9, 6000, 9000, True, (40 - 45, 9)),  # whole kilos: 6 kg pays 40 + 9
        ([(5500, 40)], 9, 5000, 9000, True, None),  # a line lighter than the last tier
    ],
)
def test_weight_terms_at_the_edges(tiers, per_kg, lightest, heaviest, kilos, term):
    assert _weight_term(tiers, per_kg, lightest, heaviest, kilos) == term


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(carts(max_items=4, max_merchants=4))
def test_the_node_rule_agrees_with_the_merchant_rule_on_version_1_carts(cart):
    """Where both apply (one node a merchant, no tiers), the version 2 rule takes the same
    carts with the same terms as version 1's, refusing for the same reason."""
    problem = CartProblem.from_dict(cart)
    fee, unit, refusal = _merchant_terms(problem)
    terms = column_terms(problem)
    assert (refusal is None) == (terms.refusal is None)
    if refusal is None or terms.refusal is None:
        assert terms.fee.tolist() == fee.tolist() and terms.unit.tolist() == unit.tolist()
        assert not terms.kilo.any()
    else:
        merchant_path, _, rule = terms.refusal.field.partition(".")
        assert refusal.field == f"{merchant_path}.{_V1_FIELD[rule]}"


# A version 2 refusal's field as version 1 names it.
_V1_FIELD = {
    "discount": "discount",
    "free_over": "shipping.free_over",
    "nodes[0].shipping": "shipping",
}
