"""The batch's exact pruning (:mod:`gpu_engine.batch.prune`): pruned totals equal the unpruned
solver's on random carts (the realistic mix, the light synthetic carts, and hand-made
thresholds, discounts and ties), every optimal assignment survives the pruning, the bound is
the exact price of an assignment, and the CUDA kernel (simulator) prunes as the CPU twin."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_engine.batch import pack_carts, solve_packed
from gpu_engine.batch.mix import mix_batch, take_carts
from gpu_engine.batch.pack import DP, FULL, TOO_LARGE, plan_batch
from gpu_engine.batch.prune import INF, PRUNE_ALWAYS, lb_offer
from gpu_engine.batch.synthetic import synthetic_batch
from gpu_engine.pricing import merchant_cost

# Edge values on purpose: a 100% discount, free shipping from 0, thresholds a cart meets
# exactly, equal prices (ties) and zero fees.
BASES = st.sampled_from([0, 0, 199, 499, 799])
EXTRAS = st.sampled_from([0, 50, 150])
FREES = st.sampled_from([-1, 0, 1000, 2500, 5000])
BPS = st.sampled_from([0, 300, 1000, 5000, 10_000])
PRICES = st.sampled_from([0, 500, 999, 1000, 1250, 2500, 2501])


@st.composite
def packed_carts(draw, max_carts=4, max_lines=5, max_merchants=4):
    """Carts straight in packed columns, each merchant its own pricing row."""
    n_carts = draw(st.integers(1, max_carts))
    line_counts: list[int] = []
    qty: list[int] = []
    offer_counts: list[int] = []
    merch: list[int] = []
    price: list[int] = []
    merch_counts: list[int] = []
    rows: list[list[int]] = [[], [], [], [], []]
    for _ in range(n_carts):
        n_merch = draw(st.integers(1, max_merchants))
        n_lines = draw(st.integers(1, max_lines))
        line_counts.append(n_lines)
        merch_counts.append(n_merch)
        for _ in range(n_lines):
            qty.append(draw(st.integers(1, 3)))
            sellers = draw(st.lists(st.integers(0, n_merch - 1), min_size=1, unique=True))
            offer_counts.append(len(sellers))
            merch.extend(sellers)
            price.extend(draw(PRICES) for _ in sellers)
        for _ in range(n_merch):
            dmin = draw(st.sampled_from([0, 1, 2, 4]))
            values = (draw(BASES), draw(EXTRAS), draw(FREES), dmin, draw(BPS) if dmin else 0)
            for column, value in zip(rows, values, strict=True):
                column.append(value)
    n_rows = len(rows[0])
    return pack_carts(
        line_counts=np.array(line_counts),
        line_qty=np.array(qty),
        offer_counts=np.array(offer_counts),
        offer_merchant=np.array(merch),
        offer_price=np.array(price),
        merchant_counts=np.array(merch_counts),
        merchant_row=np.arange(n_rows),
        merchant_index=np.arange(n_rows),
        params=[np.array(column) for column in rows],
    )


def _assert_pruned_equals_unpruned(batch, prefer=None):
    pruned = solve_packed(batch, device="cpu", prune=PRUNE_ALWAYS, prefer=prefer)
    plain = solve_packed(batch, device="cpu", prune=False, prefer=prefer)
    np.testing.assert_array_equal(pruned.total, plain.total)
    solved = pruned.plan.method != TOO_LARGE
    assert pruned.plan.bound is not None
    # The bound is some assignment's exact total: never below the optimum.
    assert (pruned.plan.bound[solved] >= pruned.total[solved]).all()
    return pruned


@settings(max_examples=150, deadline=None)
@given(packed_carts(), st.sampled_from([None, FULL, DP]))
def test_pruned_totals_equal_unpruned_on_edge_carts(batch, prefer):
    _assert_pruned_equals_unpruned(batch, prefer)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_pruned_totals_equal_unpruned_on_the_realistic_mix(seed):
    batch = mix_batch(40, seed=seed)
    lines = np.diff(batch.line_ptr)
    # Keep the heavy carts few: the unpruned solver is the slow side of this test.
    _assert_pruned_equals_unpruned(take_carts(batch, np.flatnonzero(lines <= 10)[:30]))


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_pruned_totals_equal_unpruned_on_synthetic_carts(seed):
    _assert_pruned_equals_unpruned(synthetic_batch(60, seed=seed, max_lines=9))


def test_default_pruning_keeps_totals_on_heavy_mix_carts():
    batch = mix_batch(300, seed=5)
    heavy = take_carts(batch, np.flatnonzero(np.diff(batch.line_ptr) >= 11)[:25])
    pruned = solve_packed(heavy, device="cpu")
    plain = solve_packed(heavy, device="cpu", prune=False)
    np.testing.assert_array_equal(pruned.total, plain.total)
    # The default prunes these: most of them drop offers.
    kept = pruned.plan.offer_end - heavy.offer_ptr[:-1]
    assert kept.sum() < np.diff(heavy.offer_ptr).sum()


def _assignments(batch, c):
    """Every assignment of cart ``c`` as a tuple of (line, merchant), with its total."""
    lines = range(int(batch.line_ptr[c]), int(batch.line_ptr[c + 1]))
    m0 = int(batch.merch_ptr[c])
    options = [
        [(line, o) for o in range(int(batch.offer_ptr[line]), int(batch.offer_ptr[line + 1]))]
        for line in lines
    ]
    for pick in itertools.product(*options):
        sub: dict[int, list[int]] = {}
        for line, o in pick:
            m = int(batch.offer_merchant[o])
            entry = sub.setdefault(m, [0, 0])
            entry[0] += int(batch.offer_amount[o])
            entry[1] += int(batch.line_qty[line])
        total = 0
        for m, (amount, units) in sub.items():
            g = int(batch.merch_row[m0 + m])
            params = (batch.base, batch.extra, batch.free_over, batch.dmin, batch.dbp)
            total += merchant_cost(amount, units, *(int(p[g]) for p in params))
        yield tuple((line, int(batch.offer_merchant[o])) for line, o in pick), total


@settings(max_examples=80, deadline=None)
@given(packed_carts(max_carts=2, max_lines=4, max_merchants=3))
def test_every_optimal_assignment_survives_the_pruning(batch):
    plan = plan_batch(batch, prune=PRUNE_ALWAYS)
    assert plan.offer_end is not None and plan.offer_merchant is not None
    assert plan.bound is not None
    for c in range(batch.n_carts):
        found = list(_assignments(batch, c))
        best = min(total for _, total in found)
        for pick, total in found:
            if total != best:
                continue
            for line, merchant in pick:
                kept = plan.offer_merchant[batch.offer_ptr[line] : plan.offer_end[line]]
                assert merchant in kept
        bound = int(plan.bound[c])
        assert bound == INF or bound in {total for _, total in found}


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 10**7), min_size=1, max_size=6),
    st.integers(1, 5),
    st.integers(0, 10_000),
)
def test_least_goods_bound_the_discounted_goods(amounts, dmin, bp):
    goods = merchant_cost(sum(amounts), 10, 0, 0, -1, dmin, bp)
    assert goods >= sum(lb_offer(a, dmin, bp) for a in amounts)
    assert all(0 <= lb_offer(a, dmin, bp) <= a for a in amounts)


@pytest.mark.cudasim
def test_simulated_kernel_prunes_as_the_cpu_twin():
    batch = mix_batch(200, seed=17)
    lines = np.diff(batch.line_ptr)
    part = take_carts(batch, np.concatenate([np.flatnonzero(lines >= 9)[:6], [0, 1, 2]]))
    cpu = solve_packed(part, device="cpu", prune=PRUNE_ALWAYS)
    for variant in ("split-warp", "overlap"):
        gpu = solve_packed(part, device="gpu", prune=PRUNE_ALWAYS, gpu_variant=variant)
        np.testing.assert_array_equal(gpu.total, cpu.total, err_msg=variant)
        np.testing.assert_array_equal(gpu.choice, cpu.choice, err_msg=variant)
        np.testing.assert_array_equal(gpu.plan.method, cpu.plan.method, err_msg=variant)


@pytest.mark.gpu
def test_gpu_mix_batch_matches_the_cpu_twin_and_the_per_cart_solver():
    from gpu_engine import solve
    from gpu_engine.batch.synthetic import cart_problem
    from gpu_engine.bench.batch_variants import VARIANTS

    batch = mix_batch(20_000, seed=23)
    cpu = solve_packed(batch, device="cpu")
    plain = solve_packed(batch, device="gpu", prune=False)
    np.testing.assert_array_equal(plain.total, cpu.total)
    for variant in VARIANTS:
        gpu = solve_packed(batch, device="gpu", gpu_variant=variant)
        np.testing.assert_array_equal(gpu.total, cpu.total, err_msg=variant)
        np.testing.assert_array_equal(gpu.choice, cpu.choice, err_msg=variant)
    for c in range(0, batch.n_carts, 400):
        assert solve(cart_problem(batch, c), algorithm="dp").total == cpu.total[c]
