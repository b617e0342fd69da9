"""The ISHOP-U conversion and suite: the quantity cap keeps every line feasible, and the engine's
total on converted instances meets an exhaustive search and one-thread HiGHS."""

import argparse

import numpy as np
import pytest

from gpu_engine import CartProblem, solve
from gpu_engine.bench import ishop
from gpu_engine.bench.ishop_data import NAMES, convert, load, parse_csv
from gpu_engine.bench.peers import solve_highs

# Three stores, two products, in the source's layout (trailing commas included). Product 1 wants
# 5 units and no store has more than 4: the cap makes it 4, which only store 2 covers.
TINY_CSV = """#NO_PRODUCTS, NO_STORES
2,3
#PRODUCT_NO, QUANTITY_TO_BUY
0,2
1,5
#STORE_NO, DELIVERY_PRICE
0,5.18
1,0.0
2,3.4
#MATRIX OF PRICES (ROWS STORES - COLUMNS PRODUCTS)
10.5,0.0,
12.01,7.25,
0.0,8.0,
#MATRIX OF AVAILABILITY (ROWS STORES - COLUMNS PRODUCTS)
3,0,
1,2,
0,4,
"""


def test_the_conversion_caps_quantities_at_the_largest_stock():
    data = convert(parse_csv(TINY_CSV))
    assert [item["quantity"] for item in data["items"]] == [2, 4]
    assert [m["shipping"] for m in data["merchants"]] == [
        {"base_fee": fee, "per_extra_unit": 0} for fee in (518, 0, 340)
    ]
    assert {(o["item"], o["merchant"]): (o["price"], o["stock"]) for o in data["offers"]} == {
        ("p00", "s000"): (1050, 3),
        ("p00", "s001"): (1201, 1),
        ("p01", "s001"): (725, 2),
        ("p01", "s002"): (800, 4),
    }
    problem = CartProblem.from_dict(data)
    # Offers below the quantity are kept but ineligible; every line keeps one.
    assert problem.cand_count.tolist() == [1, 1]
    assert solve(problem, algorithm="auto").total == 518 + 2 * 1050 + 340 + 4 * 800


def test_every_committed_instance_loads_with_every_line_feasible():
    for name in NAMES:
        problem = CartProblem.from_dict(load(name))
        assert {10: 25, 25: 50, 50: 100}[problem.n_items] == problem.n_merchants
        assert int(problem.cand_count.min()) >= 1


def _exhaustive(problem: CartProblem) -> int:
    """Every assignment by depth-first search, pruned by the cheapest goods still to buy: the
    ISHOP cost (goods plus each opened store's fee), priced here independently of the engine."""
    goods = [
        {int(m): int(problem.quantity[i] * problem.price[i, m]) for m in np.flatnonzero(row >= 0)}
        for i, row in enumerate(problem.price)
    ]
    fee = [int(f) for f in problem.base_fee]
    rest = [*np.cumsum([min(g.values()) for g in goods][::-1])[::-1].tolist(), 0]
    best = [sum(max(g.values()) for g in goods) + sum(fee)]

    def visit(i: int, cost: int, opened: frozenset[int]) -> None:
        if cost + rest[i] >= best[0]:
            return
        if i == len(goods):
            best[0] = cost
            return
        for m, amount in sorted(goods[i].items(), key=lambda kv: kv[1]):
            extra = 0 if m in opened else fee[m]
            visit(i + 1, cost + amount + extra, opened | {m})

    visit(0, 0, frozenset())
    return best[0]


@pytest.mark.parametrize("name", [n for n in NAMES if n[-2] == "S"])
def test_the_engine_meets_an_exhaustive_search_on_the_small_instances(name):
    # 10 lines, 25 stores, 288,000 to 260,789,760 assignments; the search prunes them in ms.
    problem = CartProblem.from_dict(load(name))
    solution = solve(problem, algorithm="auto", budget_ms=1000)
    assert solution.optimal
    assert solution.total == _exhaustive(problem)


@pytest.mark.parametrize("name", ["GaussianM1", "UniformM3"])
def test_the_engine_meets_one_thread_highs(name):
    # GaussianM1: the drop heuristic's answer is 48 cents above the optimum there.
    problem = CartProblem.from_dict(load(name))
    peer = solve_highs(problem, threads=1)
    solution = solve(problem, algorithm="auto", budget_ms=1000)
    assert peer.optimal and solution.optimal
    assert solution.total == peer.total


def test_the_suite_reports_a_row_and_a_summary():
    parser = argparse.ArgumentParser()
    ishop.add_arguments(parser)
    args = parser.parse_args(["--ishop-names", "UniformS3", "--ishop-repeats", "1"])
    row, summary = ishop.run(args)
    assert row["case"] == "UniformS3" and row["lines"] == 10 and row["stores"] == 25
    assert row["engine_total"] == row["highs_total"] and row["engine_proven"]
    assert summary["at_optimum"] == summary["engine_proven_count"] == 1
