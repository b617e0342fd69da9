"""Issue 25's carts (copied from ``shared/repro``): no crash, no traceback, the right answer or
a clear refusal, on every algorithm, at 200 ms, 1 s and without a budget."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_engine import CartProblem, ProblemError, solve
from gpu_engine.solvers.registry import SOLVERS

REPRO = Path(__file__).with_name("repro")
# Each cart's optimum (the exact DP, full search and the planner's proof agree).
OPTIMUM = {
    "highs-segfault-9e7": 45_794_863,
    "milp-wrong-proof-9e7": 1_024_855,
    "milp-wrong-proof-120-lines": 77_931_546,
}
# The gpu-* algorithms run on a real GPU only (the simulator would take minutes a cart).
ALGORITHMS = [
    pytest.param(name, marks=pytest.mark.gpu) if name.startswith("gpu") else name
    for name in ("auto", *SOLVERS)
]


def _problem(name: str) -> CartProblem:
    return CartProblem.from_json((REPRO / f"{name}.json").read_bytes())


@pytest.mark.parametrize("budget_ms", [200, pytest.param(1000, marks=pytest.mark.slow), None])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("name", sorted(OPTIMUM))
def test_every_algorithm_answers_right_or_refuses_clearly(name, algorithm, budget_ms):
    problem = _problem(name)
    try:
        answer = solve(problem, algorithm=algorithm, budget_ms=budget_ms)
    except ProblemError as refusal:  # too large for the method, no GPU here: named, no crash
        assert refusal.field and refusal.reason
        return
    assert answer.total >= OPTIMUM[name]
    assert not answer.optimal or answer.total == OPTIMUM[name]
    if algorithm in ("auto", "milp") and budget_ms != 200:
        assert answer.optimal  # HiGHS proves each of them within a second here


@pytest.mark.slow
def test_the_planner_gets_the_optimum_of_each_at_a_second():
    for name, optimum in OPTIMUM.items():
        assert solve(_problem(name), budget_ms=1000, allow_gpu=False).total == optimum


def test_the_huge_integer_is_refused_naming_its_field():
    with pytest.raises(ProblemError) as refused:
        _problem("huge-integer-traceback")
    assert refused.value.field == "items[0].quantity"
    assert "5001 digits" in str(refused.value)


@pytest.mark.slow
@pytest.mark.parametrize("name", [*sorted(OPTIMUM), "huge-integer-traceback"])
def test_the_cli_exits_cleanly_on_each(name):
    """As the issue ran them: the HiGHS crash exited 139, the huge integer printed a traceback."""
    args = [str(REPRO / f"{name}.json"), "--budget-ms", "1000", "--algorithm", "milp"]
    done = subprocess.run(
        [sys.executable, "-m", "gpu_engine", "solve", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in done.stderr
    if name in OPTIMUM:
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["total"] == OPTIMUM[name]
    else:
        assert done.returncode == 2 and done.stderr.startswith("error: items[0].quantity")
