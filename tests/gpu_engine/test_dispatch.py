from gpu_engine import CartProblem, solve
from gpu_engine.bench.instances import seed_cart, uniform_cart
from gpu_engine.dispatch import choose_algorithm
from gpu_engine.warmup import _TINY


def test_tiny_carts_go_to_the_cpu_full_search():
    name, plan = choose_algorithm(CartProblem.from_dict(_TINY))
    assert name == "cpu-full" and plan["reason"] == "tiny cart"


def test_the_seed_cart_goes_to_the_subset_dp_and_the_plan_is_reported():
    problem = CartProblem.from_dict(seed_cart())
    name, plan = choose_algorithm(problem)
    assert name == "dp"
    assert plan["estimated_dp_s"] < plan["estimated_full_search_s"]
    solution = solve(problem)
    assert solution.plan["algorithm"] == "dp" and solution.optimal


def test_many_two_offer_lines_go_to_full_search():
    # 30 lines with two offers: 2^30 assignments, but a 2^30-state DP table per merchant.
    problem = CartProblem.from_dict(uniform_cart(30, 2, 4, seed=1))
    name, plan = choose_algorithm(problem)
    assert name in {"cpu-full", "gpu-full"}
    assert plan["estimated_full_search_s"] < plan["estimated_dp_s"]
