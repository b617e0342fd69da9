"""gpu-full on version 2 carts: the parcel kernel in the CUDA simulator at tiny sizes (against
the v2 brute force and the CPU twin, index for index), on a real GPU under the gpu marker."""

import itertools

import numpy as np
import pytest

from gpu_engine import CartProblem, pricing, solve
from gpu_engine.fuzz.v2_carts import random_v2_cart
from gpu_engine.layout import full_search_layout
from gpu_engine.problem import CapacityError
from gpu_engine.reference import reference_brute_force_v2, reference_cost_v2
from gpu_engine.solvers.full.cpu import search_layout
from gpu_engine.solvers.full.cuda import LaunchConfig, row_size, search_rows, solve_gpu_full
from gpu_engine.solvers.full.cuda_parcels import search_rate
from tests.gpu_engine.solvers.full import v2_cases

CONFIGS = (
    LaunchConfig(),
    LaunchConfig(pair=False),
    LaunchConfig(int32=False, blocks=1, rows_per_chunk=2),
)


def _answer(solution) -> dict[str, tuple[str, str]]:
    return {line: (m, solution.nodes[line]) for line, m in solution.assignment.items()}


def _check(cart, configs=CONFIGS) -> None:
    problem = CartProblem.from_dict(cart)
    assert not problem.simple
    best, _ = reference_brute_force_v2(cart)
    for config in configs:
        solution = solve_gpu_full(problem, config=config)
        assert solution.total == best and solution.optimal
        assert reference_cost_v2(cart, _answer(solution)) == best


@pytest.mark.cudasim
@pytest.mark.parametrize("seed", range(6))
def test_simulated_parcel_kernel_equals_the_v2_brute_force(seed):
    # Three to five lines: the simulator runs every thread in Python.
    cart = random_v2_cart(seed, 3 + seed % 3, offers=(1, 2), max_nodes=3, cents=(1, 100)[seed % 2])
    _check(cart)


@pytest.mark.cudasim
@pytest.mark.parametrize(
    "build",
    [v2_cases.tier_tipping_cart, v2_cases.two_node_threshold_cart, v2_cases.limit_cart],
)
def test_simulated_parcel_kernel_on_hard_carts(build):
    _check(build())


@pytest.mark.cudasim
def test_simulated_parcel_kernel_matches_cpu_on_ranges_and_ties():
    layout = full_search_layout(CartProblem.from_dict(v2_cases.tied_cart()))
    for config in (LaunchConfig(pair=True), LaunchConfig(pair=False)):
        r_in = row_size(layout, config)
        n_rows = layout.complexity // r_in
        for lo, hi in ((0, n_rows), (1, n_rows - 1), (n_rows - 1, n_rows)):
            gpu_total, gpu_index, rows = search_rows(
                layout, start_row=lo, stop_row=hi, config=config
            )
            assert rows == hi - lo
            assert (gpu_total, gpu_index) == search_layout(layout, start=lo * r_in, stop=hi * r_in)


@pytest.mark.cudasim
def test_int32_state_holds_thresholds_no_cart_reaches():
    # free_over and min_units past int32: cast as they were, 2**32 + 100 would read 100 and
    # ship free, 2**32 + 2 would read 2 and discount.
    cart = v2_cases.two_node_threshold_cart()
    cart["merchants"][0]["free_over"] = 2**32 + 100
    cart["merchants"][0]["discount"] = {"min_units": 2**32 + 2, "basis_points": 5000}
    _check(cart, configs=(LaunchConfig(int32=True), LaunchConfig(int32=True, pair=False)))
    v1 = {
        "items": [{"id": "a", "quantity": 1}, {"id": "b", "quantity": 2}],
        "merchants": [
            {
                "id": f"m{m}",
                "shipping": {"base_fee": 300, "per_extra_unit": 0, "free_over": 2**32 + 100},
                "discount": {"min_units": 2**32 + 2, "basis_points": 5000},
            }
            for m in range(2)
        ],
        "offers": [
            {"item": i, "merchant": f"m{m}", "price": 400 + 10 * m, "stock": None}
            for i in "ab"
            for m in range(2)
        ],
    }
    problem = CartProblem.from_dict(v1)
    assert solve_gpu_full(problem, config=LaunchConfig(int32=True)).total == 400 + 800 + 300


@pytest.mark.cudasim
def test_int32_state_is_refused_when_weights_do_not_fit():
    cart = v2_cases.tier_tipping_cart()
    cart["items"][0]["weight_g"] = 2**31
    problem = CartProblem.from_dict(cart)
    with pytest.raises(CapacityError):
        solve_gpu_full(problem, config=LaunchConfig(int32=True))
    assert solve_gpu_full(problem).total == reference_brute_force_v2(cart)[0]


@pytest.mark.cudasim
def test_one_assignment_and_split_devices():
    cart = v2_cases.two_node_threshold_cart()
    only = {**cart, "offers": [o for o in cart["offers"] if o["merchant"] == "big"]}
    problem = CartProblem.from_dict(only)
    assert problem.complexity == 1
    assert solve_gpu_full(problem).total == reference_brute_force_v2(only)[0]
    cart = v2_cases.tier_tipping_cart()
    split = solve_gpu_full(CartProblem.from_dict(cart), device_ids=[0, 0])
    assert split.total == reference_brute_force_v2(cart)[0] and split.optimal


@pytest.mark.gpu
def test_real_gpu_parcel_kernel_matches_cpu_full_search():
    for seed in range(4):
        problem = CartProblem.from_dict(
            random_v2_cart(seed, 9, n_merchants=5, max_nodes=3, offers=(2, 4))
        )
        cpu = solve(problem, algorithm="cpu-full")
        for config in (
            LaunchConfig(),
            LaunchConfig(pair=False),
            LaunchConfig(shuffle=False),
            LaunchConfig(int32=False),
            LaunchConfig(threads=128, rows_per_chunk=3),
        ):
            gpu = solve_gpu_full(problem, config=config)
            assert gpu.total == cpu.total and gpu.optimal
            assert gpu.stats["pricing_device_function"] == "njit"


@pytest.mark.gpu
def test_real_gpu_parcel_kernel_on_hard_and_huge_carts():
    carts = [
        v2_cases.tier_tipping_cart(),
        v2_cases.two_node_threshold_cart(),
        v2_cases.tied_cart(),
        v2_cases.limit_cart(),
        *v2_cases.huge_money_carts(3),
    ]
    for cart in carts:
        best, _ = reference_brute_force_v2(cart)
        gpu = solve_gpu_full(CartProblem.from_dict(cart))
        assert gpu.total == best and reference_cost_v2(cart, _answer(gpu)) == best


@pytest.mark.gpu
def test_real_gpu_v2_split_ranges_and_time_box():
    problem = CartProblem.from_dict(
        random_v2_cart(3, 11, n_merchants=5, max_nodes=3, offers=(3, 4))
    )
    layout = full_search_layout(problem)
    whole = search_rows(layout)
    cuts = np.linspace(0, whole[2], 5).astype(np.int64)
    parts = [
        search_rows(layout, start_row=int(a), stop_row=int(b)) for a, b in itertools.pairwise(cuts)
    ]
    assert min((p[0], p[1]) for p in parts) == whole[:2]
    assert solve_gpu_full(problem, device_ids=[0, 0]).total == whole[0]


@pytest.mark.gpu
def test_real_gpu_v2_time_box_is_flagged_not_optimal():
    cart = random_v2_cart(1, 17, n_merchants=5, max_nodes=3, offers=(3, 4))
    problem = CartProblem.from_dict(cart)
    assert problem.complexity > 5 * 10**10
    # Half the predicted time: accepted (refused past 4x), and cut between launches.
    budget_ms = problem.complexity / search_rate(full_search_layout(problem)) * 1e3 / 2
    cut = solve_gpu_full(problem, budget_ms=budget_ms)
    assert not cut.optimal and 0 < cut.stats["searched"] < problem.complexity
    assert reference_cost_v2(cart, _answer(cut)) == cut.total


@pytest.mark.gpu
def test_real_gpu_parcel_kernel_in_the_cuda_jit_form(monkeypatch):
    # The form a numba-cuda that refuses CPU dispatchers gets: every callee rebuilt by cuda.jit.
    monkeypatch.setitem(pricing._device_variant, "name", "cuda.jit(py_func)")
    cart = random_v2_cart(2, 8, n_merchants=4, max_nodes=3, offers=(2, 4))
    problem = CartProblem.from_dict(cart)
    for config in (LaunchConfig(), LaunchConfig(pair=False, int32=False)):
        gpu = solve_gpu_full(problem, config=config)
        assert gpu.total == solve(problem, algorithm="cpu-full").total
        assert gpu.stats["pricing_device_function"] == "cuda.jit(py_func)"
