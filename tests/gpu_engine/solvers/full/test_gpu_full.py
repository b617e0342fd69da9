"""GPU full search: CUDA simulator at tiny sizes in CI, real hardware under the gpu marker."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings

from gpu_engine import CartProblem, solve
from gpu_engine.layout import ComplexityError, full_search_layout
from gpu_engine.problem import CapacityError
from gpu_engine.reference import reference_brute_force
from gpu_engine.solvers.full.cpu import search_layout
from gpu_engine.solvers.full.cuda import LaunchConfig, row_size, search_rows, solve_gpu_full
from tests.gpu_engine.strategies import carts


@pytest.mark.cudasim
@settings(max_examples=8, deadline=None)
@given(carts(max_items=4, max_merchants=3))
def test_simulated_kernel_equals_brute_force(cart):
    problem = CartProblem.from_dict(cart)
    best, _ = reference_brute_force(cart)
    configs = [
        LaunchConfig(),
        LaunchConfig(pair=False),
        LaunchConfig(int32=False, blocks=1, rows_per_chunk=2),
    ]
    for config in configs:
        solution = solve_gpu_full(problem, config=config)
        assert solution.total == best and solution.optimal


@pytest.mark.cudasim
def test_simulated_kernel_matches_cpu_on_ranges_and_ties():
    cart = {
        "items": [{"id": f"i{i}", "quantity": 1 + i % 2} for i in range(4)],
        "merchants": [
            {"id": f"m{m}", "shipping": {"base_fee": 300, "per_extra_unit": 0, "free_over": 2000}}
            for m in range(3)
        ],
        # Equal prices everywhere: many ties; both searches must return the lowest index.
        "offers": [
            {"item": f"i{i}", "merchant": f"m{m}", "price": 500, "stock": None}
            for i in range(4)
            for m in range(3)
        ],
    }
    layout = full_search_layout(CartProblem.from_dict(cart))
    for config in (LaunchConfig(pair=True), LaunchConfig(pair=False)):
        r_in = row_size(layout, config)
        n_rows = layout.complexity // r_in
        for lo, hi in ((0, n_rows), (1, n_rows - 1), (n_rows - 1, n_rows)):
            gpu_total, gpu_index, rows = search_rows(
                layout, start_row=lo, stop_row=hi, config=config
            )
            assert rows == hi - lo
            expected = search_layout(layout, start=lo * r_in, stop=hi * r_in)
            assert (gpu_total, gpu_index) == expected


def test_refuses_more_than_int64_assignments():
    cart = {
        "items": [{"id": f"i{i}", "quantity": 1} for i in range(64)],
        "merchants": [
            {"id": f"m{m}", "shipping": {"base_fee": 0, "per_extra_unit": 0, "free_over": None}}
            for m in range(2)
        ],
        "offers": [
            {"item": f"i{i}", "merchant": f"m{m}", "price": 1, "stock": None}
            for i in range(64)
            for m in range(2)
        ],
    }
    problem = CartProblem.from_dict(cart)
    with pytest.raises(ComplexityError) as info:
        solve(problem, algorithm="gpu-full")
    assert info.value.field == "complexity" and info.value.value == 2**64
    assert "int64" in str(info.value)
    with pytest.raises(CapacityError):
        solve(problem, algorithm="cpu-full")


@pytest.mark.cudasim
def test_int32_state_is_refused_when_totals_do_not_fit():
    cart = {
        "items": [{"id": "a", "quantity": 1}, {"id": "b", "quantity": 1}],
        "merchants": [
            {"id": f"m{m}", "shipping": {"base_fee": 0, "per_extra_unit": 0, "free_over": None}}
            for m in range(2)
        ],
        "offers": [
            {"item": i, "merchant": f"m{m}", "price": 2**31, "stock": None}
            for i in "ab"
            for m in range(2)
        ],
    }
    problem = CartProblem.from_dict(cart)
    with pytest.raises(CapacityError):
        solve_gpu_full(problem, config=LaunchConfig(int32=True))
    # The default picks int64 state and stays exact.
    assert solve_gpu_full(problem).total == 2**32


@pytest.mark.gpu
def test_real_gpu_matches_cpu_full_search_on_medium_carts():
    from gpu_engine.bench.instances import uniform_cart

    for seed, shape in enumerate([(6, 5, 9), (7, 6, 12), (8, 4, 30)]):
        problem = CartProblem.from_dict(uniform_cart(*shape, seed=seed))
        cpu = solve(problem, algorithm="cpu-full")
        for config in (
            LaunchConfig(),
            LaunchConfig(pair=False),
            LaunchConfig(shuffle=False),
            LaunchConfig(int32=False),
            LaunchConfig(threads=128, rows_per_chunk=3),
        ):
            gpu = solve_gpu_full(problem, config=config)
            assert gpu.total == cpu.total
            assert gpu.stats["pricing_device_function"] == "njit"


@pytest.mark.gpu
def test_real_gpu_time_box_and_split_cover_the_search():
    from gpu_engine.bench.instances import uniform_cart

    problem = CartProblem.from_dict(uniform_cart(9, 6, 20, seed=4))
    layout = full_search_layout(problem)
    whole = search_rows(layout)
    n_rows = whole[2]
    cuts = np.linspace(0, n_rows, 5).astype(np.int64)
    parts = [
        search_rows(layout, start_row=int(a), stop_row=int(b)) for a, b in itertools.pairwise(cuts)
    ]
    assert min((p[0], p[1]) for p in parts) == whole[:2]
    assert solve(problem, algorithm="dp").total == whole[0]
    # Two host threads, each with its own slice (both on device 0 here).
    assert solve_gpu_full(problem, device_ids=[0, 0]).total == whole[0]


@pytest.mark.cudasim
def test_rows_split_over_several_devices_cover_the_search():
    # The simulator has one device; naming it twice still exercises the split and the merge.
    cart = {
        "items": [{"id": f"i{i}", "quantity": 1} for i in range(4)],
        "merchants": [
            {"id": f"m{m}", "shipping": {"base_fee": 250, "per_extra_unit": 400, "free_over": None}}
            for m in range(3)
        ],
        "offers": [
            {"item": f"i{i}", "merchant": f"m{m}", "price": 300 + 37 * ((i * 5 + m * 3) % 7)}
            for i in range(4)
            for m in range(3)
        ],
    }
    problem = CartProblem.from_dict(cart)
    split = solve_gpu_full(problem, device_ids=[0, 0])
    assert split.total == reference_brute_force(cart)[0] and split.optimal
