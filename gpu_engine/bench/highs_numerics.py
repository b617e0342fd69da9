"""HiGHS's answers on expensive carts against the exact DP: how often HiGHS proves a
total above the optimum, or fails, as the money grows.

The carts (:func:`expensive_cart`) have merchants with free-shipping thresholds and discounts
together (the rows where a tolerance can round a discount's floor or a threshold the wrong way)
and unit prices near ``--numerics-prices`` cents, 16 lines and 10 merchants: small enough for
the exact merchant DP (integer arithmetic) to be the reference. Per price scale, HiGHS runs as
the planner's HiGHS-first route does (presolve on, warm-started with the drop heuristic) and
cold; a row counts the carts where HiGHS claimed "Optimal" at a total above the DP's
(``wrong``), ended otherwise (``failed``: infeasible, errors, time) or was not run (amounts
beyond ``HIGHS_MAX_MONEY``). ``--numerics-tolerance default`` repeats the sweep with HiGHS's
default feasibility tolerance (1e-6) instead of the engine's (``feasibility_tolerance``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from gpu_engine.bench.common import device_facts
from gpu_engine.problem import CartProblem

SUITE = "highs_numerics"


def add_arguments(parser) -> None:
    parser.add_argument(
        "--numerics-prices", default="1e5,1e6,1e7", help="highs_numerics: unit price scales"
    )
    parser.add_argument("--numerics-carts", type=int, default=20, help="highs_numerics: carts")
    parser.add_argument(
        "--numerics-tolerance",
        choices=("engine", "default"),
        default="engine",
        help="highs_numerics: HiGHS's feasibility tolerance (engine: scaled to the cart)",
    )


def expensive_cart(seed: int, price: float, lines: int = 16) -> dict[str, Any]:
    """Ten merchants, about half with a free-shipping threshold and half with a discount, unit
    prices of ``price / 2`` to ``price`` cents and shipping of the same order."""
    rng = np.random.default_rng(seed)
    merchants = []
    for m in range(10):
        shipping = {
            "base_fee": int(2 * price * rng.uniform(0.3, 1)),
            "per_extra_unit": int(price * rng.uniform(0, 1)),
            "free_over": None if rng.random() < 0.5 else int(price * rng.uniform(0.5, 3)),
        }
        discount = None
        if rng.random() < 0.5:
            discount = {
                "min_units": int(rng.integers(1, 5)),
                "basis_points": int(rng.integers(1, 10000)),
            }
        merchants.append({"id": f"m{m}", "shipping": shipping, "discount": discount})
    items, offers = [], []
    for i in range(lines):
        items.append({"id": f"i{i}", "quantity": int(rng.integers(1, 4))})
        for m in rng.choice(10, int(rng.integers(2, 6)), replace=False):
            unit = int(price * rng.uniform(0.5, 1))
            offers.append({"item": f"i{i}", "merchant": f"m{m}", "price": unit, "stock": None})
    return {"items": items, "merchants": merchants, "offers": offers}


def run(args) -> list[dict[str, Any]]:
    from gpu_engine.solvers.milp import runner

    default = args.numerics_tolerance == "default"
    engine_tolerance = runner.feasibility_tolerance
    if default:
        runner.feasibility_tolerance = lambda money: runner._DEFAULT_FEASIBILITY
    try:
        return [_row(float(p), args) for p in str(args.numerics_prices).split(",") if p]
    finally:
        runner.feasibility_tolerance = engine_tolerance


def _row(price: float, args) -> dict[str, Any]:
    from gpu_engine import solve
    from gpu_engine.solvers.ga.seeds import drop_seed
    from gpu_engine.solvers.milp.model import money_scale
    from gpu_engine.solvers.milp.neighbourhood import total_of
    from gpu_engine.solvers.milp.runner import MONEY_STATUS, milp_run

    counts: Counter[str] = Counter()
    scales = []
    for seed in range(args.numerics_carts):
        problem = CartProblem.from_dict(expensive_cart(seed, price))
        scales.append(money_scale(problem))
        exact = solve(problem, algorithm="dp").total
        for route, warm in (("warm", drop_seed(problem)), ("cold", None)):
            outcome = milp_run(problem, time_limit_ms=3000, warm_start=warm)
            if outcome.status == MONEY_STATUS:
                counts[f"{route}_not_run"] += 1
            elif outcome.status != "Optimal" or outcome.choice is None:
                counts[f"{route}_failed"] += 1
            elif total_of(problem, outcome.choice) != exact:
                counts[f"{route}_wrong"] += 1
    return {
        "suite": SUITE,
        "case": f"unit prices ~{price:.0e} cents",
        "tolerance": args.numerics_tolerance,
        "carts": args.numerics_carts,
        "money_scale_median": float(np.median(scales)),
        **{key: counts[key] for key in _KEYS},
        **device_facts(),
    }


_KEYS = [f"{route}_{what}" for route in ("warm", "cold") for what in ("wrong", "failed", "not_run")]
