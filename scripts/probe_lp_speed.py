"""Device probe (issue 13): the LP relaxation's time on this host under HiGHS's LP options.

python scripts/probe_lp_speed.py THREADS

HiGHS's thread pool is made once per process: run once per thread count. One JSON line per
(cart, options): the LP's ms (best of two) and its optimum.
"""

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpu_engine import CartProblem
from gpu_engine.bench.family_carts import FAMILIES
from gpu_engine.solvers.milp import highs_child, runner
from gpu_engine.solvers.milp.model import milp_build

OPTIONS = [
    {},
    {"presolve": "off"},
    {"simplex_strategy": 2, "simplex_max_concurrency": 8},
    {"simplex_strategy": 3, "simplex_max_concurrency": 8},
    {"presolve": "off", "simplex_strategy": 3, "simplex_max_concurrency": 8},
    {"solver": "ipm", "run_crossover": "off"},
    {"simplex_strategy": 4},
]
CARTS = [("large_qty", 0), ("large_qty", 1), ("large_qty", 2), ("mixed", 0), ("threshold_deep", 0)]


def lp_ms(model, threads: int, options: dict) -> tuple[float, float]:
    best = float("inf")
    value = float("nan")
    for _ in range(2):
        highs = _relaxation(model, threads, options)
        t0 = time.perf_counter()
        highs.run()
        best = min(best, (time.perf_counter() - t0) * 1e3)
        value = highs.getInfo().objective_function_value
    return best, value


def _relaxation(model, threads: int, options: dict):
    """The LP relaxation in a HiGHS of this process (the engine runs it in its solver process),
    with the engine's options and then ``options``."""
    import highspy

    request = runner._request(model, None, threads, relaxed=True)
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    for key, option in {**request["options"], **options}.items():
        highs.setOptionValue(key, option)
    highs_child._pass_program(highs, request["program"], relaxed=True)
    return highs


def main(threads: int) -> None:
    for family, k in CARTS:
        problem = CartProblem.from_dict(FAMILIES[family](200 * 1000 + k, 200))
        model = milp_build(problem)
        for options in OPTIONS:
            ms, value = lp_ms(model, threads, options)
            row = {"threads": threads, "cart": f"{family} 200 #{k}", "options": options}
            print(json.dumps({**row, "ms": round(ms, 1), "lp": round(value, 1)}), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]))
