"""``python -m gpu_engine bench --suite highs_numerics`` at a tiny size: rows per price scale,
no wrong proof with the engine's tolerance, HiGHS not run beyond its exact range."""

import argparse

import pytest

from gpu_engine.bench import highs_numerics
from gpu_engine.solvers.milp import runner

pytestmark = pytest.mark.slow


def _args(*extra: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    highs_numerics.add_arguments(parser)
    return parser.parse_args(["--numerics-prices", "1e4,1e9", "--numerics-carts", "2", *extra])


def test_the_numerics_suite_counts_per_price_scale():
    small, huge = highs_numerics.run(_args())
    assert small["case"] == "unit prices ~1e+04 cents" and small["carts"] == 2
    assert small["warm_wrong"] == small["cold_wrong"] == small["warm_not_run"] == 0
    assert huge["warm_not_run"] == huge["cold_not_run"] == 2


def test_the_default_tolerance_run_puts_the_engine_tolerance_back():
    engine = runner.feasibility_tolerance
    highs_numerics.run(_args("--numerics-tolerance", "default"))
    assert runner.feasibility_tolerance is engine
