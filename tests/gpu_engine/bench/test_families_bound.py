"""``python -m gpu_engine bench --suite families_bound`` at a tiny size: the LP bound never
above the optimum, and a warm start at the optimum proved with and without HiGHS's presolve."""

import argparse

import pytest

from gpu_engine.bench import families_bound

pytestmark = pytest.mark.slow


def test_the_bound_suite_reports_every_family_and_size():
    parser = argparse.ArgumentParser()
    families_bound.add_arguments(parser)
    args = parser.parse_args(
        [
            "--families-bound-names",
            "threshold_deep,large_qty",
            "--families-bound-lines",
            "8",
            "--families-bound-carts",
            "2",
            "--families-bound-proof-ms",
            "5000",
            "--families-bound-cpu-ms",
            "100000",
        ]
    )
    rows = families_bound.run(args)
    assert [row["case"] for row in rows] == ["threshold_deep 8 lines", "large_qty 8 lines"]
    for row in rows:
        assert row["with_proven_ref"] == 2 and row["lp_gap_pct_max"] >= 0
        assert row["presolve_proved"] == 2 and row["no_presolve_proved"] == 2
        assert row["no_presolve_proved_cpu_100000ms"] == 2
        assert row["engine_proved"] == 2
