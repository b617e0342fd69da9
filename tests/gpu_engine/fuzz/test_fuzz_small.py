"""The fuzz harness at a small size: every CPU route, with and without a budget, on a few dozen
extreme carts. Any crash, traceback, wrong proof, answer below the optimum or total that does
not re-price fails it; the findings say which cart (re-run: ``python -m gpu_engine fuzz --seed
SEED --first INDEX --carts 1``)."""

import pytest

from gpu_engine.fuzz.judge import FAILURES
from gpu_engine.fuzz.report import format_findings
from gpu_engine.fuzz.routes import default_routes
from gpu_engine.fuzz.runner import FuzzConfig, run_fuzz

pytestmark = pytest.mark.slow

CARTS = 40


def test_every_cpu_route_on_small_extreme_carts():
    routes = default_routes(include_gpu=False)
    config = FuzzConfig(
        carts=CARTS, seed=2025, routes=routes, budgets_ms=[None, 200.0, 10.0], workers=2
    )
    result = run_fuzz(config)
    tally = result.tally
    assert tally.carts == CARTS
    assert {route for route, _ in tally.counts} == set(routes)
    assert tally.oracles["brute"] + tally.oracles["exact"] >= CARTS // 2
    defects = [f for f in tally.findings if f.kind in FAILURES]
    assert defects == [], format_findings(defects, 20, "python -m gpu_engine fuzz")
