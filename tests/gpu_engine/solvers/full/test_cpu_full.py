import itertools

import numpy as np
import pytest
from hypothesis import given, settings

from gpu_engine import CartProblem, solve
from gpu_engine.layout import full_search_layout
from gpu_engine.planning import rates
from gpu_engine.reference import reference_brute_force, reference_cost
from gpu_engine.solvers.full.cpu import search_layout
from tests.gpu_engine.strategies import carts


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(carts(max_items=5, max_merchants=4))
def test_cpu_full_equals_brute_force(cart):
    solution = solve(CartProblem.from_dict(cart), algorithm="cpu-full")
    best, _ = reference_brute_force(cart)
    assert solution.total == best
    assert reference_cost(cart, solution.assignment) == best
    assert solution.optimal and solution.algorithm == "cpu-full"


@settings(max_examples=20, deadline=None)
@given(carts(max_items=4, max_merchants=4))
def test_split_ranges_cover_the_search(cart):
    layout = full_search_layout(CartProblem.from_dict(cart))
    whole = search_layout(layout)
    cuts = np.unique(np.linspace(0, layout.complexity, 4).astype(np.int64))
    parts = [search_layout(layout, start=int(a), stop=int(b)) for a, b in itertools.pairwise(cuts)]
    assert min(parts) == whole


@pytest.mark.slow
def test_time_boxed_search_is_flagged_not_optimal():
    cart = {
        "items": [{"id": f"i{i}", "quantity": 1} for i in range(8)],
        "merchants": [
            {"id": f"m{m}", "shipping": {"base_fee": 300, "per_extra_unit": 0, "free_over": None}}
            for m in range(12)
        ],
        "offers": [
            {
                "item": f"i{i}",
                "merchant": f"m{m}",
                "price": 100 + (7 * i + 3 * m) % 50,
                "stock": None,
            }
            for i in range(8)
            for m in range(12)
        ],
    }
    # Half the predicted time: within what cpu-full accepts (it refuses past 4x), and it stops.
    budget_ms = 12**8 / rates.cpu_full_rate() * 1e3 / 2
    solution = solve(CartProblem.from_dict(cart), algorithm="cpu-full", budget_ms=budget_ms)
    assert not solution.optimal
    assert 0 < solution.stats["searched"] < 12**8
    assert reference_cost(cart, solution.assignment) == solution.total
