"""Compile (or load from numba's cache) every kernel before the first shopper needs it."""

from __future__ import annotations

import functools
import importlib
import threading
import time
from typing import Any, cast

import numpy as np

from gpu_engine.problem import CartProblem

# The tiny cart every warm-up solves (public: the apps' workers warm their own paths on it).
WARMUP_CART = {
    "items": [{"id": "a", "quantity": 2}, {"id": "b", "quantity": 1}, {"id": "c", "quantity": 3}],
    "merchants": [
        {
            "id": "m1",
            "shipping": {"base_fee": 499, "per_extra_unit": 100, "free_over": 5000},
            "discount": {"min_units": 3, "basis_points": 500},
        },
        # Shipping on every merchant keeps the GA off its price-only lower bound, so it runs
        # generations and compiles the generation and elite kernels, not only the seeding.
        {"id": "m2", "shipping": {"base_fee": 299, "per_extra_unit": 0, "free_over": None}},
    ],
    "offers": [
        {"item": item, "merchant": merchant, "price": price, "stock": None}
        for item, merchant, price in (
            ("a", "m1", 1999),
            ("a", "m2", 2100),
            ("b", "m1", 500),
            ("b", "m2", 450),
            ("c", "m1", 999),
            ("c", "m2", 1200),
        )
    ],
}


# A tiny version 2 cart (two nodes for m1, weight tiers, a threshold both nodes reach together):
# the routes that price parcels compile their version 2 paths on it.
WARMUP_CART_V2 = {
    "items": [
        {"id": "a", "quantity": 2, "weight_g": 1500},
        {"id": "b", "quantity": 1, "weight_g": 7000},
        {"id": "c", "quantity": 1, "weight_g": 200},
    ],
    "merchants": [
        {
            "id": "m1",
            "free_over": 6000,
            "discount": {"min_units": 3, "basis_points": 500},
            "nodes": [
                {
                    "id": "hamburg",
                    "shipping": {
                        "base_fee": 399,
                        "per_extra_unit": 100,
                        "weight_tiers": [
                            {"up_to_g": 2000, "fee": 0},
                            {"up_to_g": 10000, "fee": 300},
                        ],
                        "per_kg_over": 50,
                    },
                },
                {"id": "munich", "shipping": {"base_fee": 499, "per_extra_unit": 0}},
            ],
        },
        {"id": "m2", "shipping": {"base_fee": 299, "per_extra_unit": 0, "free_over": None}},
    ],
    "offers": [
        {"item": "a", "merchant": "m1", "node": "hamburg", "price": 1999, "stock": None},
        {"item": "a", "merchant": "m1", "node": "munich", "price": 1999, "stock": 5},
        {"item": "b", "merchant": "m1", "node": "munich", "price": 2500, "stock": None},
        {"item": "b", "merchant": "m2", "price": 2450, "stock": None},
        {"item": "c", "merchant": "m1", "node": "hamburg", "price": 999, "stock": None},
        {"item": "c", "merchant": "m2", "price": 1200, "stock": None},
    ],
}


def _warm_version_2(solvers: dict[str, Any], gpu: bool) -> dict[str, float]:
    """Every route that prices version 2 carts, on :data:`WARMUP_CART_V2` (a route that does
    not yet refuses it at once, which compiles nothing)."""
    from gpu_engine.planning.fulfilled import solve_fulfilled
    from gpu_engine.problem import FulfillmentUnsupported

    problem = CartProblem.from_dict(WARMUP_CART_V2)
    timings: dict[str, float] = {}
    for name, solver in solvers.items():
        if name.startswith("gpu") and not gpu:
            continue
        run = functools.partial(solver, device="cpu") if name == "dp" and not gpu else solver
        t0 = time.perf_counter()
        try:
            run(problem)
        except FulfillmentUnsupported:
            continue
        timings[f"v2:{name}"] = time.perf_counter() - t0
    from gpu_engine.batch.engine import solve_problems

    for device in ("cpu", "gpu") if gpu else ("cpu",):
        t0 = time.perf_counter()
        solve_problems([problem], device=device)
        timings[f"v2:batch-{device}"] = time.perf_counter() - t0
    # The GA stops at its lower bound on this cart before any generation: its v2 generation,
    # descent and kernels are compiled here.
    from gpu_engine.solvers.ga.solve import warm_steps

    t0 = time.perf_counter()
    warm_steps(problem, gpu=gpu)
    timings["v2:ga-steps"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    solve_fulfilled(problem, budget_ms=200.0, seed=0, gpu_idle=gpu)
    timings["v2:auto"] = time.perf_counter() - t0
    return timings


def warmup(*, include_gpu: bool = True) -> dict[str, float]:
    """Run every registered solver once on a tiny cart. Returns seconds per solver (the first
    call of a fresh process pays compilation).

    ``include_gpu=True``: the GPU solvers and kernel variants too, on a real GPU only.
    ``include_gpu=False`` never touches CUDA, not even to ask whether a GPU is present: for the
    web process and CPU workers, which must hold no CUDA context (prefork children)."""
    from gpu_engine.device import gpu_available
    from gpu_engine.solvers.registry import SOLVERS

    problem = CartProblem.from_dict(WARMUP_CART)
    gpu = include_gpu and gpu_available()
    timings: dict[str, float] = {}
    for name, solver in SOLVERS.items():
        if name.startswith("gpu") and not gpu:
            continue
        # "dp" resolves its device itself ("auto"): pinned to the CPU when CUDA is off limits.
        run = functools.partial(solver, device="cpu") if name == "dp" and not gpu else solver
        t0 = time.perf_counter()
        if name == "flat":
            _warm_flat()
        else:
            run(problem)
        timings[name] = time.perf_counter() - t0
    t0 = time.perf_counter()
    _warm_merchant_dp(problem)
    timings["merchant-dp"] = time.perf_counter() - t0
    if gpu:
        t0 = time.perf_counter()
        _warm_gpu_merchant_dp(problem)
        timings["gpu-merchant-dp"] = time.perf_counter() - t0
    timings.update(_warm_batch(problem, gpu))
    timings.update(_warm_version_2(SOLVERS, gpu))
    if gpu:
        t0 = time.perf_counter()
        _warm_gpu_variants(problem)
        _warm_gpu_variants(CartProblem.from_dict(WARMUP_CART_V2))
        timings["gpu-full-variants"] = time.perf_counter() - t0
    global _cpu_warm, _gpu_warm
    _cpu_warm = True
    _gpu_warm = _gpu_warm or gpu
    return timings


_warm_lock = threading.Lock()
_cpu_warm = False
_gpu_warm = False


def ensure_cpu_warm() -> float:
    """Run the CPU-only :func:`warmup` once per process, before a budget's clock starts: a cold
    process loads or compiles the numba functions inside the first call (~0.3-0.7 s for the
    GA), which would otherwise eat a shopper's budget. Returns the seconds spent (0 when the
    process was already warm); never touches CUDA."""
    if _cpu_warm:
        return 0.0
    with _warm_lock:
        if _cpu_warm:
            return 0.0
        t0 = time.perf_counter()
        warmup(include_gpu=False)
        return time.perf_counter() - t0


def ensure_gpu_warm() -> float:
    """The full :func:`warmup`, GPU kernels included, once per process (the CLI calls it before
    a GPU algorithm's budget starts). Returns the seconds spent."""
    if _gpu_warm:
        return 0.0
    with _warm_lock:
        if _gpu_warm:
            return 0.0
        t0 = time.perf_counter()
        warmup(include_gpu=True)
        return time.perf_counter() - t0


# Algorithms that run on a GPU where one is present ("dp" and the planner pick their device).
_GPU_REACHING = frozenset({"auto", "dp"})


def warm_before_budget(algorithm: str, *, allow_gpu: bool = True) -> float:
    """Warm, once per process, what ``algorithm`` can reach, before its budget's clock starts:
    the CLI, :func:`gpu_engine.solve` and the planner all call this one. The GPU's kernels too
    where the algorithm runs on a GPU: a ``gpu-*`` algorithm (refused at once where no CUDA
    target is, the solver's own error), or ``auto``/``dp`` with ``allow_gpu`` on a real GPU;
    ``allow_gpu=False`` never touches CUDA. Returns the seconds spent (0 when already warm)."""
    from gpu_engine.device import gpu_available, require_gpu_for

    if algorithm.startswith("gpu"):
        require_gpu_for(algorithm)
    reaches_gpu = algorithm.startswith("gpu") or algorithm in _GPU_REACHING
    if allow_gpu and reaches_gpu and gpu_available():
        spent = ensure_gpu_warm()
    else:
        spent = ensure_cpu_warm()
    return spent + _ready_planner(algorithm)


# Algorithms that run HiGHS (in its solver process, started before the budget).
_HIGHS_REACHING = frozenset({"auto", "milp"})


def _ready_planner(algorithm: str) -> float:
    """Start this process's HiGHS solver process if ``algorithm`` can reach HiGHS and it is not
    running (a forked worker inherits "warm" but not the process), and import the modules the
    planner reaches lazily (~10 ms the first time, inside the first budget otherwise). Returns
    the seconds spent."""
    if algorithm not in _HIGHS_REACHING:
        return 0.0
    from gpu_engine.solvers.milp import highs_process

    t0 = time.perf_counter()
    for module in _PLANNER_MODULES:
        importlib.import_module(module)
    highs_process.start()
    return time.perf_counter() - t0


# What the planner imports on first use (its routes, bounds and proof checks).
_PLANNER_MODULES = (
    "gpu_engine.planning.executor",
    "gpu_engine.planning.anytime",
    "gpu_engine.bounds.lp",
    "gpu_engine.solvers.milp.neighbourhood",
    "gpu_engine.solvers.flat.solve",
    "gpu_engine.certify",
    "gpu_engine.planning.fulfilled",
    "gpu_engine.planning.fulfilled_search",
    "gpu_engine.solvers.milp.fulfilled",
)


def _warm_flat() -> None:
    """The flat-cart solver on :data:`WARMUP_CART` without its thresholds and discount: the
    root, the warm start's local search, and branch and bound below the root (asked to beat a
    total no answer reaches, so that it bounds nodes even where the root proves the cart)."""
    from gpu_engine.solvers.flat.branch import Search, branch_and_bound, evaluate
    from gpu_engine.solvers.flat.data import flat_data
    from gpu_engine.solvers.flat.solve import solve_flat

    tiny_merchants = cast(list[dict[str, Any]], WARMUP_CART["merchants"])
    merchants = [
        {"id": m["id"], "shipping": {**m["shipping"], "free_over": None}} for m in tiny_merchants
    ]
    problem = CartProblem.from_dict({**WARMUP_CART, "merchants": merchants})
    solved = solve_flat(problem, warm_start=problem.cand_merchant[:, 0].astype(np.int64))
    data = flat_data(problem)
    order = np.argsort(data.cand_count, kind="stable").astype(np.int64)
    none = np.zeros(data.n_merchants, dtype=np.bool_)
    root = evaluate(data, order, data.fee.copy(), ~none, none)
    assert root is not None, "the tiny cart has an offer on every line"
    search = Search(solved.total + 1, np.ones(data.n_merchants, dtype=np.bool_), root.bound)
    branch_and_bound(data, order, root, search, at=None, max_nodes=8)


def _warm_merchant_dp(problem: CartProblem) -> None:
    """The tiny cart's DP answers with the relaxed DP, so the merchant DP is compiled here, for
    both choice-table dtypes it can take (uint16 up to 16 lines a merchant, int32 beyond): the
    whole-run function and the slices that ``solve_dp`` runs between deadline checks."""
    from gpu_engine.solvers.dp.cpu import merchant_dp
    from gpu_engine.solvers.dp.inputs import merchant_dp_inputs
    from gpu_engine.solvers.dp.solve import run_merchant_cpu

    inputs = merchant_dp_inputs(problem)
    run_merchant_cpu(problem, inputs)
    for dtype in (np.uint16, np.int32):
        pick = np.empty((inputs.merchants.size, 1 << inputs.k), dtype=dtype)
        merchant_dp(
            inputs.k,
            inputs.mask,
            inputs.n_lines,
            inputs.lines,
            inputs.amount,
            inputs.units,
            inputs.sub0,
            inputs.units0,
            inputs.params,
            pick,
        )


def _warm_gpu_merchant_dp(problem: CartProblem) -> None:
    """The merchant DP's kernels (the tiny cart's ``gpu-dp`` takes the relaxed DP on the CPU)."""
    from gpu_engine.solvers.dp.cuda import run_merchant_gpu
    from gpu_engine.solvers.dp.inputs import merchant_dp_inputs

    inputs = merchant_dp_inputs(problem)
    # Both choice-table dtypes, as for the CPU DP: a cart with more than 16 lines at one
    # merchant takes int32 and must not compile inside its budget.
    for dtype in (np.uint16, np.int32):
        run_merchant_gpu(problem, inputs, pick_dtype=np.dtype(dtype))


def _warm_batch(problem: CartProblem, gpu: bool) -> dict[str, float]:
    """The batch solver's CPU twin (and kernel on a GPU), both of its exact methods."""
    from gpu_engine.batch.engine import solve_problems
    from gpu_engine.batch.pack import DP, FULL

    timings = {}
    for device in ("cpu", "gpu") if gpu else ("cpu",):
        t0 = time.perf_counter()
        for prefer in (FULL, DP):
            solve_problems([problem], device=device, prefer=prefer)
        if device == "gpu":
            _warm_batch_gpu_variants(problem)
        timings[f"batch-{device}"] = time.perf_counter() - t0
    return timings


def _warm_batch_gpu_variants(problem: CartProblem) -> None:
    """Both variants the GPU batch picks by size (small batches "split-warp", large ones
    "overlap", see gpu_engine.batch.gpu.default_variant) run here once, each method each."""
    from gpu_engine.batch import staging
    from gpu_engine.batch.engine import solve_packed
    from gpu_engine.batch.gpu import DEFAULT_VARIANT, SMALL_BATCH_VARIANT
    from gpu_engine.batch.pack import DP, FULL, pack_problems

    # The parallel cast into pinned buffers only runs on large batches: compile it here too.
    staging.warm()
    batch = pack_problems([problem])
    for variant in (SMALL_BATCH_VARIANT, DEFAULT_VARIANT):
        for prefer in (FULL, DP):
            solve_packed(batch, device="gpu", prefer=prefer, gpu_variant=variant)


def _warm_gpu_variants(problem: CartProblem) -> None:
    """CUDA kernels built in closures are compiled per process (numba cannot cache them):
    compile the variants real carts need besides the default, int64 state (large carts) and
    the single-line row (carts whose last line has many offers)."""
    from gpu_engine.solvers.full.cuda import LaunchConfig, solve_gpu_full

    for config in (LaunchConfig(int32=False), LaunchConfig(pair=False)):
        solve_gpu_full(problem, config=config)
