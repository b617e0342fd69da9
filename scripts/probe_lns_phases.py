"""Prints the planner's phases on the families' hardest 200-line carts (issue 13's device probe).

python scripts/probe_lns_phases.py [BUDGET_MS ...]
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpu_engine import CartProblem, solve
from gpu_engine.bench.family_carts import FAMILIES

CARTS = [("split_punish", 200, 0), ("split_punish", 200, 2), ("large_qty", 200, 1)]


def main(budgets: list[float]) -> None:
    for family, lines, k in CARTS:
        problem = CartProblem.from_dict(FAMILIES[family](1000 * lines + k, lines))
        solve(problem, budget_ms=50)  # warm
        for budget in budgets:
            solution = solve(problem, budget_ms=budget)
            phases = [
                {
                    key: p.get(key)
                    for key in ("phase", "ms", "total", "budget_ms", "skipped", "steps")
                }
                for p in solution.plan["ran"]
            ]
            print(
                json.dumps(
                    {
                        "cart": f"{family} {lines} #{k}",
                        "budget": budget,
                        "total": solution.total,
                        "phases": phases,
                    }
                )
            )


if __name__ == "__main__":
    main([float(b) for b in sys.argv[1:]] or [200.0])
