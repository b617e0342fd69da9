"""The version 2 program prices every assignment exactly: the point of each assignment (the warm
start) satisfies every row and bound, is integral where the program says so, and its objective
is the spec's total. With the brute-force tests (no integral point is cheaper than its
assignment's total) that makes HiGHS's optimum the cart's, and the LP relaxation a lower bound."""

import itertools

import numpy as np
import pytest

from gpu_engine import CartProblem
from gpu_engine.fuzz.v2_carts import random_v2_cart
from gpu_engine.pricing import total_of
from gpu_engine.solvers.milp.fulfilled import fulfilled_build, weight_segments
from gpu_engine.solvers.milp.model import milp_point
from gpu_engine.solvers.milp.runner import program_build


def _violations(model, point: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Rows and columns ``point`` breaks, and its objective."""
    arrays = model.model.arrays()
    rows = np.array(
        [
            arrays.value[lo:hi] @ point[arrays.index[lo:hi]]
            for lo, hi in zip(arrays.starts[:-1], arrays.starts[1:], strict=True)
        ]
    )
    bad_rows = np.flatnonzero((rows < arrays.row_lower - 1e-9) | (rows > arrays.row_upper + 1e-9))
    integral = arrays.integer.astype(bool)
    bad_cols = np.flatnonzero(
        (point < arrays.lower - 1e-9)
        | (point > arrays.upper + 1e-9)
        | (integral & (point != np.round(point)))
    )
    return bad_rows, bad_cols, float(arrays.cost @ point)


def _assignments(problem: CartProblem):
    cands = [problem.cand_merchant[i, : problem.cand_count[i]] for i in range(problem.n_items)]
    for picks in itertools.product(*cands):
        yield np.asarray(picks, dtype=np.int64)


@pytest.mark.parametrize("cents", [1, 100, 100_000])
@pytest.mark.parametrize("seed", range(12))
def test_every_assignment_is_a_feasible_point_priced_exactly(seed, cents):
    cart = random_v2_cart(seed, 3 + seed % 3, cents=cents)
    problem = CartProblem.from_dict(cart)
    model = program_build(problem)
    assert (model.fulfilled is None) == problem.simple
    for choice in itertools.islice(_assignments(problem), 400):
        bad_rows, bad_cols, objective = _violations(model, milp_point(model, choice))
        assert bad_rows.size == 0 and bad_cols.size == 0, (choice, bad_rows, bad_cols)
        assert objective == total_of(problem, choice)


def test_segments_merge_equal_fees_and_stop_at_the_reachable_grams():
    cart = {
        "items": [{"id": "a", "quantity": 1, "weight_g": 2600}],
        "merchants": [
            {
                "id": "m",
                "nodes": [
                    {
                        "id": "n",
                        "shipping": {
                            "base_fee": 100,
                            "per_extra_unit": 0,
                            "weight_tiers": [
                                {"up_to_g": 1000, "fee": 300},
                                {"up_to_g": 2000, "fee": 300},
                                {"up_to_g": 2500, "fee": 100},
                                {"up_to_g": 9000, "fee": 700},
                            ],
                            "per_kg_over": 50,
                        },
                    }
                ],
            }
        ],
        "offers": [{"item": "a", "merchant": "m", "node": "n", "price": 10}],
    }
    problem = CartProblem.from_dict(cart)
    segs = [(s.lo, s.up, s.fee, s.over) for s in weight_segments(problem, 0, 2600)]
    assert segs == [(0, 2000, 300, False), (2001, 2500, 100, False), (2501, 9000, 700, False)]
    segs = [(s.lo, s.up, s.fee, s.over) for s in weight_segments(problem, 0, 12_000)]
    assert segs[-1] == (9001, 12_000, 700, True)
    assert [s.fee for s in weight_segments(problem, 0, 900)] == [300]
    # One reachable segment: a constant fee on the parcel, no tier binaries.
    model = fulfilled_build(
        CartProblem.from_dict({**cart, "items": [{"id": "a", "quantity": 1, "weight_g": 900}]})
    )
    (parcel,) = model.fulfilled.owners[0].nodes
    assert parcel.seg is None and parcel.const_fee == 300
