import json
import subprocess
import sys

import pytest

import gpu_engine


@pytest.mark.slow
def test_gpu_engine_never_imports_django_or_touches_cuda():
    code = (
        "import sys, json, gpu_engine\n"
        "gpu_engine.solve(gpu_engine.CartProblem.from_dict(gpu_engine.WARMUP_CART))\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'django')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_public_api():
    for name in [
        "CartProblem",
        "ProblemError",
        "Solution",
        "MerchantCost",
        "price_assignment",
        "solve",
        "warmup",
        "gpu_available",
    ]:
        assert hasattr(gpu_engine, name)


def test_every_declared_name_resolves_without_touching_cuda():
    """The apps import only these three modules and the names their ``__all__`` lists."""
    code = (
        "import importlib, sys\n"
        "for name in ('gpu_engine', 'gpu_engine.batch', 'gpu_engine.catalog'):\n"
        "    module = importlib.import_module(name)\n"
        "    for attr in module.__all__:\n"
        "        getattr(module, attr)\n"
        "print('numba.cuda' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_gpu_available_is_false_in_the_simulator():
    assert gpu_engine.gpu_available() is False


def test_solution_to_dict_is_json_safe():
    solution = gpu_engine.solve(gpu_engine.CartProblem.from_dict(_tiny()))
    data = json.loads(json.dumps(solution.to_dict()))
    assert data["total"] == solution.total
    assert data["complexity"] == solution.complexity
    assert {"cpu_full_search_s", "gpu_full_search_s"} <= set(data["estimates"])


def _tiny():
    return gpu_engine.WARMUP_CART


def test_json_safe_gives_strict_json():
    import numpy as np

    from gpu_engine.solution import json_safe

    value = {1: (np.int64(3), np.float64(0.5)), "t": float("inf"), "n": np.float64("nan")}
    assert json_safe(value) == {"1": [3, 0.5], "t": None, "n": None}
    json.dumps(json_safe(value), allow_nan=False)  # strict JSON: no Infinity or NaN
