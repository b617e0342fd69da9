"""``gpu_engine.solvers.full.ops``: the full search's walk, written once, run as plain Python
here (both modes, every row) against the brute force, and the two searches built from it."""

import numpy as np
from hypothesis import given, settings

from gpu_engine import CartProblem
from gpu_engine.layout import full_search_layout
from gpu_engine.reference import reference_brute_force
from gpu_engine.solvers.full import cpu as full_cpu
from gpu_engine.solvers.full import ops
from gpu_engine.solvers.full.cpu import NO_BEST, search_layout
from tests.gpu_engine.strategies import carts


def _walk(layout, pair: bool) -> tuple[int, int]:
    """Every row in order through the ops, as one kernel thread walks its chunk."""
    off, cand, amount = layout.flat()
    rules = layout.params
    n = layout.n_free
    m = layout.sub0.size
    sub, units, cost = (np.zeros(m, dtype=np.int64) for _ in range(3))
    digits = np.zeros(max(n, 1), dtype=np.int64)
    lb, la = n - 1, n - 2
    prefix = la if pair else lb
    r_b = int(layout.radix[lb])
    r_a = int(layout.radix[la]) if pair else 1
    n_rows = layout.complexity // (r_a * r_b)
    delta_b = np.zeros(r_b, dtype=np.int64)
    ops.decode_row(0, prefix, layout.radix, digits)
    total = ops.row_state(
        prefix, digits, off, cand, amount, layout.qty, m, layout.sub0, layout.units0,
        sub, units, cost, *rules,
    )  # fmt: skip
    best = (NO_BEST, -1)
    for row in range(n_rows):
        if row:
            total += ops.next_row(
                prefix, digits, layout.radix, off, cand, amount, layout.qty, sub, units, cost,
                *rules,
            )  # fmt: skip
        if pair:
            best = ops.row_pair(
                row, total, la, lb, r_a, r_b, off, cand, amount, layout.qty, sub, units, cost,
                *rules, delta_b, *best,
            )  # fmt: skip
        else:
            best = ops.row_single(
                row, total, lb, 0, r_b, r_b, off, cand, amount, layout.qty, sub, units, cost,
                *rules, *best,
            )  # fmt: skip
    return int(best[0]), int(best[1])


@settings(max_examples=40, deadline=None)
@given(carts(max_items=5, max_merchants=4))
def test_ops_walk_equals_brute_force_and_the_cpu_twin(cart):
    layout = full_search_layout(CartProblem.from_dict(cart))
    best, _ = reference_brute_force(cart)
    expected = search_layout(layout)
    assert expected[0] == best
    # Single mode needs a free line, pair mode two.
    for pair in (False, True)[: min(2, layout.n_free)]:
        assert _walk(layout, pair) == expected


def test_the_cpu_twin_compiles_the_shared_ops():
    assert full_cpu._row_single.py_func is ops.row_single
    assert full_cpu._row_state.py_func is ops.row_state
    assert full_cpu._decode_row.py_func is ops.decode_row
