"""``gpu_engine.warmup``: every solver compiled once; the CPU-only flavour never touches CUDA."""

import contextlib
import importlib

import pytest

import gpu_engine.device
from gpu_engine.problem import ProblemError
from gpu_engine.solvers.registry import SOLVERS
from gpu_engine.warmup import warmup

pytestmark = pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaDeprecationWarning")


def test_cpu_only_warmup_never_asks_for_cuda(monkeypatch):
    def no_cuda():
        raise AssertionError("warmup(include_gpu=False) asked whether a GPU is present")

    monkeypatch.setattr(gpu_engine.device, "gpu_available", no_cuda)
    timings = warmup(include_gpu=False)
    assert set(timings) == _cpu_names()
    assert all(seconds >= 0 for seconds in timings.values())


# The CPU routes that price version 2 carts (flat refuses the warm-up's v2 cart: its discount
# is in reach): each warms its v2 path too.
V2_CPU_ROUTES = ("cpu-full", "dp", "cpu-dp", "milp", "cpu-ga")


def _cpu_names() -> set[str]:
    return (
        {name for name in SOLVERS if not name.startswith("gpu")}
        | {"merchant-dp", "batch-cpu", "v2:ga-steps", "v2:auto", "v2:batch-cpu"}
        | {f"v2:{name}" for name in V2_CPU_ROUTES}
    )


def test_default_warmup_skips_gpu_solvers_without_a_real_gpu(monkeypatch):
    monkeypatch.setattr(gpu_engine.device, "gpu_available", lambda: False)
    assert set(warmup()) == _cpu_names()


def test_the_warmup_cart_makes_the_ga_run_generations():
    """A GA that proves its seed optimal at once never launches its generation kernels, and the
    first shopper's GA would pay their compilation (seconds on the H200): the warm-up cart must
    keep the GA evolving."""
    from gpu_engine import WARMUP_CART
    from gpu_engine.problem import CartProblem
    from gpu_engine.solvers.ga.solve import solve_ga

    solution = solve_ga(CartProblem.from_dict(WARMUP_CART), device="cpu", seed=0)
    assert solution.stats["generations"] >= 1 and solution.stats["stop"] != "bound"


@pytest.mark.slow
def test_after_warmup_no_request_compiles_anything():
    """Pins the warm-up's coverage (numba's cache keys follow module paths): in a fresh process
    after ``warmup(include_gpu=False)``, requests of every CPU algorithm on small, seed, sparse
    and large carts compile no further numba function or signature."""
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "tests.gpu_engine.warm_coverage"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["missed"] == []
    reached = {entry.split("(")[0] for entry in report["warm"]}
    assert {
        "gpu_engine.solvers.dp.cpu.merchant_dp",
        "gpu_engine.solvers.full.cpu.search_range",
        "gpu_engine.solvers.dp.cpu.merchant_states",
        "gpu_engine.solvers.dp.cpu.relaxed_states",
        "gpu_engine.solvers.ga.cpu.generation_slots",
        "gpu_engine.solvers.ga.cpu.elite_moves",
        "gpu_engine.pricing.assignment_cost",
    } <= reached


@pytest.mark.gpu
def test_after_gpu_warmup_no_request_builds_a_kernel():
    """On a real GPU: after ``warmup()``, requests of the GPU algorithms (the merchant DP's
    kernels included) build no new kernel variant and compile no new signature."""
    from gpu_engine import CartProblem, solve
    from gpu_engine.planning.carts import random_cart
    from gpu_engine.solvers.dp import cuda as dp_cuda
    from gpu_engine.solvers.dp.inputs import merchant_dp_inputs
    from gpu_engine.solvers.full import cuda as full_cuda

    def built() -> tuple[int, int]:
        full = sum(len(k.overloads) for k in full_cuda._kernels.values())
        dp = sum(len(k.overloads) for ks in dp_cuda._kernels.values() for k in ks)
        return full, dp

    warmup()
    before = built()
    for seed, lines in ((1, 8), (2, 14), (3, 40)):
        problem = CartProblem.from_dict(random_cart(seed, lines, n_merchants=12, offers=(1, 4)))
        for algorithm in ("gpu-full", "gpu-dp", "gpu-ga", "auto"):
            with contextlib.suppress(ProblemError):
                solve(problem, algorithm=algorithm, budget_ms=500)
    # More than 16 free lines at one merchant: the DP's choice table is int32.
    wide = {
        "items": [{"id": f"i{i}", "quantity": 1} for i in range(18)],
        "merchants": [
            {"id": m, "shipping": {"base_fee": 499, "per_extra_unit": 100, "free_over": 9000}}
            for m in ("m1", "m2")
        ],
        "offers": [
            {"item": f"i{i}", "merchant": m, "price": 1000 + 37 * i + 11 * k, "stock": None}
            for i in range(18)
            for k, m in enumerate(("m1", "m2"))
        ],
    }
    wide_problem = CartProblem.from_dict(wide)
    dp_cuda.run_merchant_gpu(wide_problem, merchant_dp_inputs(wide_problem))
    assert built() == before


@pytest.fixture
def warm_calls(monkeypatch):
    """Records which warm-up ran (none really runs) and says a real GPU is present."""
    # ``gpu_engine.warmup`` the attribute is the package's ``warmup`` function.
    module = importlib.import_module("gpu_engine.warmup")
    calls: list[str] = []
    monkeypatch.setattr(gpu_engine.device, "gpu_available", lambda: True)
    monkeypatch.setattr(module, "ensure_gpu_warm", lambda: calls.append("gpu") or 0.0)
    monkeypatch.setattr(module, "ensure_cpu_warm", lambda: calls.append("cpu") or 0.0)
    highs_process = importlib.import_module("gpu_engine.solvers.milp.highs_process")
    monkeypatch.setattr(highs_process, "start", lambda: calls.append("highs"))
    return calls


@pytest.mark.parametrize(
    ("algorithm", "allow_gpu", "expected"),
    [
        ("auto", True, ["gpu", "highs"]),
        ("auto", False, ["cpu", "highs"]),
        ("dp", True, ["gpu"]),
        ("gpu-ga", True, ["gpu"]),
        ("cpu-ga", True, ["cpu"]),
        ("milp", True, ["cpu", "highs"]),
    ],
)
def test_one_rule_says_what_is_warmed_before_a_budget(warm_calls, algorithm, allow_gpu, expected):
    """The kernels, and HiGHS's solver process where the algorithm reaches HiGHS (a forked
    worker inherits warm kernels but must start its own process before its first budget)."""
    from gpu_engine.warmup import warm_before_budget

    assert warm_before_budget(algorithm, allow_gpu=allow_gpu) < 1.0
    assert warm_calls == expected


def test_cli_library_and_planner_warm_auto_alike_on_a_gpu(warm_calls, monkeypatch):
    """The CLI and ``gpu_engine.solve`` (the planner) warmed "auto" differently on a GPU: one
    function now decides for both, and the planner's ``allow_gpu=False`` never touches CUDA."""
    import gpu_engine.planning.executor
    from gpu_engine import WARMUP_CART, CartProblem, solve
    from gpu_engine.cli import _warm_for

    _warm_for("auto", 100.0)
    monkeypatch.setattr(gpu_engine.planning.executor, "_run", _no_solver)
    with contextlib.suppress(_Stop):
        solve(CartProblem.from_dict(WARMUP_CART), budget_ms=100.0)
    assert warm_calls == ["gpu", "highs", "gpu", "highs"]

    def no_cuda():
        raise AssertionError("allow_gpu=False asked whether a GPU is present")

    monkeypatch.setattr(gpu_engine.device, "gpu_available", no_cuda)
    with contextlib.suppress(_Stop):
        solve(CartProblem.from_dict(WARMUP_CART), budget_ms=100.0, allow_gpu=False)
    assert warm_calls == ["gpu", "highs", "gpu", "highs", "cpu", "highs"]


class _Stop(Exception):
    pass


def _no_solver(*args, **kwargs):
    raise _Stop
