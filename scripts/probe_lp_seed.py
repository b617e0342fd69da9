"""Device probe (issue 13): does the LP relaxation's rounding, as one seeded individual, lead
the GPU GA to better answers on the families' 200-line carts, and how long do the LP and a GA
generation take on this host?

python scripts/probe_lp_seed.py [CARTS_PER_FAMILY]

Per cart, one JSON line: the planner at 200 ms; the GPU GA alone for 190 ms; the LP's time
and the GA seeded with its rounding for 190 ms; "LP first": the LP, then the seeded GA on what
is left of 200 ms. Totals only: the families suite gives the gaps to proven optima.
"""

import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpu_engine import CartProblem, solve
from gpu_engine.bench.family_carts import FAMILIES
from gpu_engine.solvers.ga import cuda as ga_cuda
from gpu_engine.solvers.ga.core import ga_arrays
from gpu_engine.solvers.ga.solve import solve_ga
from gpu_engine.solvers.milp.neighbourhood import lp_guide

_plain_seeds = ga_cuda.seeded_individuals


def lp_rounding(problem: CartProblem, deadline: float) -> tuple[np.ndarray | None, float]:
    """Each line's merchant with the largest LP value, and the LP's ms (None: no LP)."""
    t0 = time.perf_counter()
    guide = lp_guide(problem, deadline=deadline)
    ms = (time.perf_counter() - t0) * 1e3
    if guide is None:
        return None, ms
    model = guide.model
    x = guide.values[: model.x_line.size]
    order = np.lexsort((-x, model.x_line))
    first = np.ones(order.size, dtype=bool)
    first[1:] = model.x_line[order[1:]] != model.x_line[order[:-1]]
    choice = np.zeros(problem.n_items, dtype=np.int64)
    choice[model.x_line[order[first]]] = model.x_merchant[order[first]]
    return choice, ms


def seeded_ga(problem: CartProblem, choice: np.ndarray, budget_ms: float):
    arrays = ga_arrays(problem)
    compact = {int(o): c for c, o in enumerate(arrays.merchants)}
    row = np.array([compact[int(m)] for m in choice], dtype=np.int32)

    def with_lp(arrays_, population):
        return np.vstack([_plain_seeds(arrays_, population), row[None, :]])

    ga_cuda.seeded_individuals = with_lp
    try:
        return solve_ga(problem, budget_ms=budget_ms, device="gpu")
    finally:
        ga_cuda.seeded_individuals = _plain_seeds


def main(carts: int) -> None:
    warm = CartProblem.from_dict(FAMILIES["mixed"](7, 60))
    solve(warm, budget_ms=100)
    solve_ga(warm, budget_ms=50, device="gpu")
    for family in FAMILIES:
        if family == "fixed_fee":
            continue
        for k in range(carts):
            problem = CartProblem.from_dict(FAMILIES[family](200 * 1000 + k, 200))
            planner = solve(problem, budget_ms=200)
            ga = solve_ga(problem, budget_ms=190, device="gpu")
            choice, lp_ms = lp_rounding(problem, time.perf_counter() + 1.0)
            row = {
                "cart": f"{family} 200 #{k}",
                "planner_200": planner.total,
                "ga_190": ga.total,
                "ga_generations": ga.stats["generations"],
                "ga_ms": round(ga.elapsed_ms, 1),
                "lp_ms": round(lp_ms, 1),
            }
            if choice is not None:
                seeded = seeded_ga(problem, choice, 190)
                row["seeded_190"] = seeded.total
                row["seeded_history"] = seeded.stats["history"][-3:]
                t0 = time.perf_counter()
                choice2, _ = lp_rounding(problem, t0 + 0.15)
                left = 200 - (time.perf_counter() - t0) * 1e3 - 5
                if choice2 is not None and left > 20:
                    row["lp_first_200"] = seeded_ga(problem, choice2, left).total
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4)
