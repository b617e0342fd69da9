"""The pool survives what kills, hangs or fails its workers, and counts it against the route
(fault routes of :mod:`gpu_engine.fuzz.faults` stand in for the engine's own defects)."""

import pytest

from gpu_engine.fuzz.runner import FuzzConfig, run_fuzz

pytestmark = pytest.mark.slow


def _counts(result, route):
    return result.tally.counts[(route, None)]


def test_crashes_are_counted_and_the_run_goes_on():
    """Each fault kills the worker that ran it; the routes queued behind them still answer."""
    routes = ["dp", "fault-segv", "fault-abort", "fault-exit", "cpu-full"]
    result = run_fuzz(FuzzConfig(carts=1, routes=routes, budgets_ms=[None], workers=2))
    for fault in ("fault-segv", "fault-abort", "fault-exit"):
        assert _counts(result, fault)["crash"] == 1, fault
    for route in ("dp", "cpu-full"):
        assert _counts(result, route)["ok"] == 1
    assert result.restarts == 3 and result.failed
    details = " ".join(f.detail for f in result.tally.findings)
    assert "killed by SIGSEGV" in details and "killed by SIGABRT" in details
    assert "exited with 3" in details
    assert "faults.py" in details  # faulthandler's stack of the dead worker


def test_a_hung_worker_is_killed_and_counted():
    config = FuzzConfig(
        carts=1, routes=["fault-hang", "dp"], budgets_ms=[None], workers=1, timeout_s=2.0
    )
    result = run_fuzz(config)
    assert _counts(result, "fault-hang")["hang"] == 1
    assert _counts(result, "dp")["ok"] == 1
    assert result.restarts == 1


def test_tracebacks_refusals_and_lies():
    routes = ["fault-raise", "fault-refuse", "fault-lie"]
    result = run_fuzz(FuzzConfig(carts=2, routes=routes, budgets_ms=[None], workers=2))
    assert _counts(result, "fault-raise")["traceback"] == 2
    assert _counts(result, "fault-refuse")["refused"] == 2
    lies = _counts(result, "fault-lie")
    assert lies["below_optimum"] == lies["bad_price"] == lies["wrong_proof"] == 2
    assert result.restarts == 0
    assert result.tally.oracles["brute"] == 2
