"""The 30 public ISHOP-U instances: solve_flat meets one-thread HiGHS's proven optimum on every
one and proves it; and the bench suite's row and summary."""

import argparse

import pytest

from gpu_engine import CartProblem
from gpu_engine.bench import flat
from gpu_engine.bench.ishop_data import NAMES, load
from gpu_engine.bench.peers import solve_highs
from gpu_engine.solvers.flat.data import is_flat
from gpu_engine.solvers.flat.solve import solve_flat


@pytest.mark.parametrize("name", NAMES)
def test_every_instance_is_proven_at_highs_optimum(name):
    problem = CartProblem.from_dict(load(name))
    assert is_flat(problem)
    peer = solve_highs(problem, threads=1)
    result = solve_flat(problem)
    assert peer.optimal
    assert result.bound <= peer.total == result.total
    # All 30 are proven by the root's dual bound alone (no branching) today.
    assert result.optimal and result.stats["proof"] == "dual bound"


def test_the_suite_reports_a_row_and_a_summary():
    parser = argparse.ArgumentParser()
    flat.add_arguments(parser)
    args = parser.parse_args(["--flat-names", "UniformS3", "--flat-repeats", "1"])
    row, summary = flat.run(args)
    assert row["case"] == "UniformS3" and row["lines"] == 10 and row["stores"] == 25
    assert row["flat_total"] == row["highs_total"] and row["flat_proven"]
    assert summary["at_optimum"] == summary["flat_proven_count"] == 1
