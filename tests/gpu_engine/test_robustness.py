"""Every input gets an answer or a clear error (issue 13): the bad-input table through the CLI
(exit 2, the field named, no traceback) and the Python API (ProblemError), budgets honoured by
the exact solvers, huge valid carts answered or refused by name, GPU algorithms refused alike
where no CUDA target is."""

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import gpu_engine.device
from gpu_engine import WARMUP_CART as _TINY
from gpu_engine import CartProblem, ProblemError, solve
from gpu_engine.budget import MAX_BUDGET_MS
from gpu_engine.cli import main
from gpu_engine.planning import rates
from gpu_engine.planning.carts import random_cart
from gpu_engine.problem import BudgetError, CapacityError, DeviceUnavailable
from gpu_engine.solvers.dp.inputs import merchant_dp_inputs
from gpu_engine.solvers.dp.solve import predicted_ms, solve_dp
from gpu_engine.solvers.full.cpu import solve_cpu_full
from gpu_engine.warmup import ensure_cpu_warm

NESTED = "[" * 100_000 + "]" * 100_000
BAD_UTF8 = b'{"items": "\xff\xfe"}'
GPU_ALGORITHMS = ("gpu-full", "gpu-ga", "gpu-dp")


def _cart(n_lines: int, n_merchants: int, offers: int) -> dict:
    """Every line offered by ``offers`` merchants (round robin), prices and rules varied."""
    merchants = [
        {
            "id": f"m{m}",
            "shipping": {"base_fee": 300 + 37 * m, "per_extra_unit": 50, "free_over": 9000},
            "discount": {"min_units": 4, "basis_points": 300 + 100 * (m % 5)},
        }
        for m in range(n_merchants)
    ]
    items = [{"id": f"i{i}", "quantity": 1 + i % 3} for i in range(n_lines)]
    offer_rows = [
        {
            "item": f"i{i}",
            "merchant": f"m{(i + k) % n_merchants}",
            "price": 100 + (i * 131 + k * 71) % 4000,
            "stock": None,
        }
        for i in range(n_lines)
        for k in range(offers)
    ]
    return {"items": items, "merchants": merchants, "offers": offer_rows}


@pytest.fixture
def no_cuda(monkeypatch):
    monkeypatch.setattr(gpu_engine.device, "cuda_target_available", lambda: False)


# --- the bad-input table ---------------------------------------------------------------------

# (case, problem file contents, extra CLI args, what stderr must name)
CLI_CASES = [
    ("nested JSON", NESTED.encode(), [], "nested too deeply"),
    ("invalid UTF-8", BAD_UTF8, [], "not valid UTF-8"),
    ("budget -5", json.dumps(_TINY).encode(), ["--budget-ms=-5"], "budget_ms"),
    ("budget 0", json.dumps(_TINY).encode(), ["--budget-ms", "0"], "budget_ms"),
    ("budget nan", json.dumps(_TINY).encode(), ["--budget-ms", "nan"], "budget_ms"),
    ("budget inf", json.dumps(_TINY).encode(), ["--budget-ms", "inf"], "budget_ms"),
    ("budget past the cap", json.dumps(_TINY).encode(), ["--budget-ms", "1e9"], "budget_ms"),
    ("budget not a number", json.dumps(_TINY).encode(), ["--budget-ms", "soon"], "budget_ms"),
    (
        "milp budget 0",
        json.dumps(_TINY).encode(),
        ["--algorithm", "milp", "--budget-ms", "0"],
        "budget_ms",
    ),
    ("unknown algorithm", json.dumps(_TINY).encode(), ["--algorithm", "fast"], "algorithm"),
    ("seed -1", json.dumps(_TINY).encode(), ["--seed=-1"], "seed"),
    ("seed past int64", json.dumps(_TINY).encode(), ["--seed", str(2**64)], "seed"),
]


@pytest.mark.parametrize(
    ("contents", "args", "named"), [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES]
)
def test_cli_refuses_bad_input_with_exit_2_naming_it(tmp_path, capsys, contents, args, named):
    path = tmp_path / "problem.json"
    path.write_bytes(contents)
    try:
        code = main(["solve", str(path), *args])
    except SystemExit as exc:  # argparse's own refusals
        code = exc.code
    out = capsys.readouterr()
    assert code == 2
    assert named in out.err and out.out == ""


@pytest.mark.parametrize("algorithm", GPU_ALGORITHMS)
def test_cli_refuses_every_gpu_algorithm_alike_without_a_gpu(tmp_path, capsys, no_cuda, algorithm):
    path = tmp_path / "problem.json"
    path.write_text(json.dumps(_TINY))
    assert main(["solve", str(path), "--algorithm", algorithm]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"error: algorithm: needs a CUDA GPU and none is available here; use auto or a cpu "
        f"algorithm (got {algorithm!r})\n"
    )


@pytest.mark.slow
def test_cli_process_prints_no_traceback(tmp_path):
    """The same refusals from a real process, CUDA simulator off (no GPU on this machine)."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0")
    nested, bad, cart = (tmp_path / n for n in ("nested.json", "bad.json", "cart.json"))
    nested.write_text(NESTED)
    bad.write_bytes(BAD_UTF8)
    cart.write_text(json.dumps(_TINY))
    for args in ([str(nested)], [str(bad)], [str(cart), "--algorithm", "gpu-dp"]):
        done = subprocess.run(
            [sys.executable, "-m", "gpu_engine", "solve", *args],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("error: ") and "Traceback" not in done.stderr


def test_api_refuses_bad_json_with_problem_error():
    with pytest.raises(ProblemError) as nested:
        CartProblem.from_json(NESTED)
    assert nested.value.field == "$" and "nested too deeply" in str(nested.value)
    with pytest.raises(ProblemError) as bad:
        CartProblem.from_json(BAD_UTF8)
    assert bad.value.field == "$"


@pytest.mark.parametrize("budget", [-5, 0, -0.0, math.nan, math.inf, MAX_BUDGET_MS + 1, True, "9"])
@pytest.mark.parametrize("algorithm", ["auto", "dp", "cpu-full", "milp", "cpu-ga"])
def test_api_refuses_bad_budgets_naming_the_field(algorithm, budget):
    with pytest.raises(ProblemError) as refused:
        solve(CartProblem.from_dict(_TINY), algorithm=algorithm, budget_ms=budget)
    assert refused.value.field == "budget_ms"


@pytest.mark.parametrize("seed", [-1, 2**63, 2**70, "x", 1.5, True, None])
@pytest.mark.parametrize("algorithm", ["auto", "cpu-ga", "dp"])
def test_api_refuses_bad_seeds_naming_the_field(algorithm, seed):
    with pytest.raises(ProblemError) as refused:
        solve(CartProblem.from_dict(_TINY), algorithm=algorithm, budget_ms=100, seed=seed)
    assert refused.value.field == "seed"


def test_api_takes_numpy_seeds():
    assert solve(CartProblem.from_dict(_TINY), budget_ms=100, seed=np.int64(7)).total >= 0


@pytest.mark.parametrize("solver", [solve_dp, solve_cpu_full])
def test_solvers_called_directly_validate_their_budget(solver):
    with pytest.raises(ProblemError, match="budget_ms"):
        solver(CartProblem.from_dict(_TINY), budget_ms=-5)


@pytest.mark.parametrize("algorithm", GPU_ALGORITHMS)
def test_api_refuses_every_gpu_algorithm_alike_without_a_gpu(no_cuda, algorithm):
    with pytest.raises(DeviceUnavailable) as refused:
        solve(CartProblem.from_dict(_TINY), algorithm=algorithm)
    assert refused.value.field == "algorithm" and refused.value.value == algorithm


# --- budgets honoured --------------------------------------------------------------------------


class _StepClock:
    """``time`` for a solver module: every reading moves the clock ``step`` seconds, so where a
    run stops is a function of its deadline checks, not of the machine's load."""

    def __init__(self, step: float) -> None:
        self.now = 1000.0
        self.step = step

    def perf_counter(self) -> float:
        self.now += self.step
        return self.now


def test_dp_refuses_up_front_when_far_over_its_budget(monkeypatch):
    import gpu_engine.solvers.dp.solve as dp_module

    def never(*args, **kwargs):
        raise AssertionError("a DP ran before the refusal")

    problem = CartProblem.from_dict(_cart(21, 8, 8))
    ensure_cpu_warm()
    monkeypatch.setattr(dp_module, "run_relaxed", never)
    monkeypatch.setattr(dp_module, "run_merchant_cpu", never)
    with pytest.raises(BudgetError) as refused:
        solve(problem, algorithm="dp", budget_ms=300)
    assert refused.value.field == "budget_ms" and "far over the budget" in str(refused.value)


def test_dp_stops_at_its_budget_with_its_best_not_optimal(monkeypatch):
    """The DP reads its clock between slices: on a clock that moves a tenth of the budget at
    each reading it stops at its first check past the deadline, as its elapsed time records."""
    import gpu_engine.budget
    import gpu_engine.solvers.dp.solve as dp_module

    problem = CartProblem.from_dict(_cart(21, 8, 8))
    # A third of the profile's prediction (the profile is the fastest host's): accepted, cut.
    budget_ms = predicted_ms(problem, merchant_dp_inputs(problem), use_gpu=False) / 3
    step_ms = budget_ms / 10
    clock = _StepClock(step_ms / 1e3)
    monkeypatch.setattr(gpu_engine.budget, "time", clock)
    monkeypatch.setattr(dp_module, "time", clock)
    solution = solve(problem, algorithm="dp", budget_ms=budget_ms)
    assert not solution.optimal and solution.stats["cut"]
    assert solution.elapsed_ms <= budget_ms + 3 * step_ms


def test_cpu_full_stops_at_its_budget_or_refuses(monkeypatch):
    problem = CartProblem.from_dict(_cart(8, 12, 12))
    predicted = problem.complexity / rates.cpu_full_rate() * 1e3
    with pytest.raises(BudgetError):
        solve(problem, algorithm="cpu-full", budget_ms=predicted / 10)
    # The search reads its clock between slices (about 60 of them here): on a clock that moves a
    # tenth of the budget at each reading it stops at its first check past the deadline.
    import gpu_engine.solvers.full.cpu as full_cpu

    budget_ms = predicted / 3
    step_ms = budget_ms / 10
    monkeypatch.setattr(full_cpu, "time", _StepClock(step_ms / 1e3))
    solution = solve(problem, algorithm="cpu-full", budget_ms=budget_ms)
    assert not solution.optimal and solution.stats["searched"] < problem.complexity
    assert solution.elapsed_ms <= budget_ms + 3 * step_ms


# --- huge valid carts ----------------------------------------------------------------------------


@pytest.mark.parametrize("n_lines", [700, 10_000])
def test_huge_carts_are_answered_by_the_planner(n_lines):
    problem = CartProblem.from_dict(_cart(n_lines, 30, 3))
    solution = solve(problem, budget_ms=300, allow_gpu=False)
    data = json.loads(json.dumps(solution.to_dict(), allow_nan=False))
    assert data["total"] == solution.total > 0
    assert len(data["assignment"]) == n_lines
    assert data["estimates"]["cpu_full_search_s"] is None  # past any float: forever


def test_huge_carts_are_refused_by_name_by_the_exact_solvers():
    problem = CartProblem.from_dict(_cart(700, 30, 3))
    with pytest.raises(CapacityError) as full:
        solve(problem, algorithm="cpu-full", budget_ms=1000)
    assert full.value.field == "complexity"
    with pytest.raises(CapacityError) as dp:
        solve(problem, algorithm="dp", budget_ms=1000)
    assert dp.value.field in ("items", "budget_ms")


def test_random_carts_of_the_planner_profile_are_answered():
    problem = CartProblem.from_dict(random_cart(3, 200, n_merchants=40, offers=(1, 4)))
    assert solve(problem, budget_ms=200, allow_gpu=False).total > 0
