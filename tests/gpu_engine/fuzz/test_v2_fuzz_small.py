"""The fuzz harness on version 2 carts at a small size: every CPU route, with and without a
budget, in worker processes. Routes that do not price version 2 answer FulfillmentUnsupported
(counted, not a defect); any crash, traceback, wrong proof, answer below the optimum or total
that does not re-price fails it (re-run: the findings' line)."""

import pytest

from gpu_engine.fuzz.draw import shape_names
from gpu_engine.fuzz.judge import FAILURES
from gpu_engine.fuzz.report import format_findings
from gpu_engine.fuzz.routes import default_routes
from gpu_engine.fuzz.runner import FuzzConfig, run_fuzz

pytestmark = pytest.mark.slow

CARTS = 30
# The large shape (25-120 lines) costs seconds a route; the acceptance run draws it.
SHAPES = tuple(s for s in shape_names("2") if s != "v2-large")


def test_every_cpu_route_on_small_v2_carts():
    routes = default_routes(include_gpu=False)
    config = FuzzConfig(
        carts=CARTS, seed=29, routes=routes, budgets_ms=[None, 10.0], workers=2, shapes=SHAPES
    )
    tally = run_fuzz(config).tally
    assert tally.carts == CARTS
    assert {route for route, _ in tally.counts} == set(routes)
    assert tally.oracles["brute"] + tally.oracles["exact"] >= CARTS // 2
    assert tally.counts[("flat", None)]["unsupported"] > 0  # flat refuses non-flat v2 carts
    assert sum(c["ok"] for c in tally.counts.values()) > len(routes) * CARTS // 2
    defects = [f for f in tally.findings if f.kind in FAILURES]
    assert defects == [], format_findings(defects, 20, "python -m gpu_engine fuzz")


def test_planted_lies_on_v2_carts_are_caught_through_the_workers():
    routes = ["cpu-full", "fault-lie", "fault-overclaim"]
    shapes = ("v2-split-threshold", "v2-weight-edges")
    config = FuzzConfig(carts=4, seed=3, routes=routes, budgets_ms=[None], shapes=shapes)
    result = run_fuzz(config)
    lies = result.tally.counts[("fault-lie", None)]
    assert lies["wrong_proof"] == lies["below_optimum"] == lies["bad_price"] == 4
    assert result.tally.counts[("cpu-full", None)]["at_optimum"] == 4
    assert result.failed
