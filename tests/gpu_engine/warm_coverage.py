"""Run in a fresh process by ``test_warmup``: after ``warmup(include_gpu=False)``, which numba
CPU functions (and signatures) does a spread of requests still compile? Prints JSON."""

from __future__ import annotations

import contextlib
import json
import sys

from numba.core.dispatcher import Dispatcher


def compiled() -> set[str]:
    """Every compiled (function, signature) of the gpu_engine modules loaded so far."""
    found = set()
    for name, module in list(sys.modules.items()):
        if not name.startswith("gpu_engine"):
            continue
        for value in vars(module).values():
            if isinstance(value, Dispatcher):
                func = value.py_func
                found.update(
                    f"{func.__module__}.{func.__qualname__}{sig}" for sig in value.signatures
                )
    return found


def requests() -> None:
    from gpu_engine import CartProblem, ProblemError, solve
    from gpu_engine.bench.instances import seed_cart, uniform_cart
    from gpu_engine.planning.carts import random_cart
    from gpu_engine.solvers.dp.inputs import merchant_dp_inputs
    from gpu_engine.solvers.dp.solve import predicted_ms, run_merchant_cpu, solve_dp

    carts = (
        uniform_cart(4, 3, 5, seed=1),
        seed_cart(),
        random_cart(2, 12, n_merchants=8, offers=(1, 4)),
        random_cart(1, 60),
    )
    for cart in carts:
        problem = CartProblem.from_dict(cart)
        solve(problem, budget_ms=100, allow_gpu=False)
        for algorithm in ("cpu-full", "dp", "cpu-dp", "milp", "cpu-ga"):
            # Out of a solver's reach is fine: the point is what it compiled on the way.
            with contextlib.suppress(ProblemError, MemoryError, RuntimeError):
                solve(problem, algorithm=algorithm, budget_ms=100)
            # The CLI's direct paths without a budget (nothing warms them in the request).
            if problem.complexity < 10**6:
                solve(problem, algorithm=algorithm)
    # A merchant DP over more than 16 lines a merchant (int32 choice table), cut by its budget.
    dense = CartProblem.from_dict(random_cart(4, 18, n_merchants=3, offers=(2, 3)))
    inputs = merchant_dp_inputs(dense)
    solve_dp(dense, budget_ms=predicted_ms(dense, inputs, use_gpu=False) / 3, device="cpu")
    run_merchant_cpu(dense, inputs)


def main() -> None:
    from gpu_engine import warmup

    warmup(include_gpu=False)
    warm = compiled()
    requests()
    print(json.dumps({"warm": sorted(warm), "missed": sorted(compiled() - warm)}))


if __name__ == "__main__":
    main()
