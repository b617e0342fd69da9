"""``calibrate``: measure this machine's solver speeds and write the planner's rate profile.

Run ``python -m gpu_engine.planning.calibrate [--out PATH] [--quick]`` (``python -m gpu_engine
calibrate`` once the CLI registers :func:`register_command`); about 15 s on the lent H200's
host, more on a slow CPU; ``--quick`` fits the MILP on fewer, smaller carts. Every measurement
is the median of warm calls on deterministic carts; GPU rates only where a real GPU is present
(otherwise the package defaults are kept for them). The profile lands in
:func:`gpu_engine.planning.profile.user_profile_path` unless ``--out`` says otherwise, and the
planner uses it from the next process on.
"""

from __future__ import annotations

import argparse
import datetime
import math
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from gpu_engine.planning.profile import (
    DEFAULT_PROFILE_PATH,
    PowerLaw,
    RateProfile,
    read_profile,
    user_profile_path,
)
from gpu_engine.problem import CartProblem

# Upper quantile of the MILP's residuals the fit is shifted to: predictions err on the slow
# side, so a predicted fit rarely overruns. The low quantile is the quick end of the spread
# (``PowerLaw.low_coef``), which the planner reads as "a proof may fit".
MILP_QUANTILE = 0.8
MILP_LOW_QUANTILE = 0.1
# Runs cut at this limit are left out of the fit: their time says only "at least this".
MILP_TIME_LIMIT_MS = 3000.0


def _median_ms(fn: Callable[[], Any], repeats: int = 3) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def _uniform(n_lines: int, offers: int, n_merchants: int, seed: int) -> CartProblem:
    from gpu_engine.bench.instances import uniform_cart

    return CartProblem.from_dict(uniform_cart(n_lines, offers, n_merchants, seed=seed))


def measure_full_search(gpu: bool) -> dict[str, float]:
    from gpu_engine.solvers.full.cpu import solve_cpu_full

    out = {}
    small, big = _uniform(3, 2, 4, seed=1), _uniform(7, 8, 24, seed=2)
    overhead = _median_ms(lambda: solve_cpu_full(small))
    big_ms = _median_ms(lambda: solve_cpu_full(big))
    out["cpu_full_overhead_ms"] = overhead
    out["cpu_full_rate"] = big.complexity / max(1e-6, (big_ms - overhead) / 1e3)
    if gpu:
        from gpu_engine.solvers.full.cuda import solve_gpu_full

        small, big = _uniform(6, 8, 24, seed=3), _uniform(10, 8, 24, seed=4)
        overhead = _median_ms(lambda: solve_gpu_full(small))
        big_ms = _median_ms(lambda: solve_gpu_full(big))
        out["gpu_full_overhead_ms"] = overhead
        out["gpu_full_rate"] = big.complexity / max(1e-6, (big_ms - overhead) / 1e3)
    return out


def measure_dp(gpu: bool) -> dict[str, float]:
    from gpu_engine.solvers.dp.solve import (
        merchant_dp_inputs,
        relaxed_steps,
        run_merchant_cpu,
        run_relaxed,
    )

    out = {}
    relaxed = _uniform(14, 6, 30, seed=5)
    out["relaxed_dp_rate"] = relaxed_steps(relaxed) / (
        _median_ms(lambda: run_relaxed(relaxed)) / 1e3
    )
    tiny = _uniform(3, 2, 4, seed=1)
    tiny_inputs = merchant_dp_inputs(tiny)
    out["dp_overhead_ms"] = _median_ms(lambda: run_merchant_cpu(tiny, tiny_inputs))
    sparse = _uniform(16, 4, 40, seed=6)
    inputs = merchant_dp_inputs(sparse)
    out["cpu_dp_rate"] = inputs.steps() / (
        _median_ms(lambda: run_merchant_cpu(sparse, inputs)) / 1e3
    )
    if gpu:
        from gpu_engine.solvers.dp.cuda import run_merchant_gpu

        out["gpu_dp_overhead_ms"] = _median_ms(lambda: run_merchant_gpu(tiny, tiny_inputs))
        dense = _uniform(20, 10, 60, seed=7)
        dense_inputs = merchant_dp_inputs(dense)
        ms = _median_ms(lambda: run_merchant_gpu(dense, dense_inputs))
        out["gpu_dp_rate"] = dense_inputs.steps() / max(
            1e-6, (ms - out["gpu_dp_overhead_ms"]) / 1e3
        )
    return out


def fit_power_law(
    pairs: list[int], ms: list[float], quantile: float, low_quantile: float | None = None
) -> PowerLaw:
    """Least squares on log(ms) = log(coef) + power * log(pairs), then the intercept moved up
    to the ``quantile`` of the residuals (and, for ``low_coef``, to the ``low_quantile``)."""
    x = np.log(np.asarray(pairs, dtype=np.float64))
    y = np.log(np.maximum(np.asarray(ms, dtype=np.float64), 1e-3))
    power, intercept = np.polyfit(x, y, 1) if np.ptp(x) > 0 else (0.0, float(y.mean()))
    power = max(0.0, float(power))
    residuals = y - (intercept + power * x)

    def coef_at(q: float) -> float:
        return float(math.exp(intercept + float(np.quantile(residuals, q))))

    low = None if low_quantile is None else coef_at(low_quantile)
    return PowerLaw(coef=coef_at(quantile), power=power, low_coef=low)


def _milp_carts(switched: bool, quick: bool) -> list[dict[str, Any]]:
    """The calibration carts: the planner's dense kind (100 merchants, 5-20 offers a line) at
    growing sizes and, for the switched law, its sparse kind too (5-60 merchants, 1-6 offers),
    whose HiGHS times at the same pair count are often far shorter."""
    from gpu_engine.planning.carts import random_cart

    seeds = (0,) if quick else (0, 1, 2)
    if not switched:
        return [
            random_cart(9000 + 10 * n + s, n, thresholds=False, discounts=False)
            for n in (10, 25, 50, 100)
            for s in seeds
        ]
    sizes = (5, 10, 15) if quick else (5, 10, 15, 20, 30, 45, 60)
    carts = [random_cart(9000 + 10 * n + s, n) for n in sizes for s in seeds]
    sparse_sizes = (10, 30) if quick else (10, 20, 40, 70, 100)
    for n in sparse_sizes:
        for s in seeds:
            merchants = 5 + (7 * n + 13 * s) % 56
            carts.append(random_cart(9500 + 10 * n + s, n, n_merchants=merchants, offers=(1, 6)))
    return carts


def measure_milp(quick: bool) -> dict[str, Any]:
    from gpu_engine.planning.carts import random_cart
    from gpu_engine.solvers.milp.runner import milp_run

    tiny = CartProblem.from_dict(random_cart(9000, 2, n_merchants=3, offers=(1, 3)))
    out: dict[str, Any] = {"milp_overhead_ms": _median_ms(lambda: milp_run(tiny, threads=1))}
    for key, switched in (("milp_flat", False), ("milp_switched", True)):
        pairs, times = [], []
        for cart in _milp_carts(switched, quick):
            problem = CartProblem.from_dict(cart)
            t0 = time.perf_counter()
            outcome = milp_run(problem, time_limit_ms=MILP_TIME_LIMIT_MS, threads=1)
            if outcome.cut or outcome.status != "Optimal":
                continue
            times.append((time.perf_counter() - t0) * 1e3)
            pairs.append(int(problem.cand_count.sum()))
        out[key] = asdict(fit_power_law(pairs, times, MILP_QUANTILE, MILP_LOW_QUANTILE))
    return out


def measure_ga(gpu: bool) -> dict[str, float]:
    from gpu_engine.planning.carts import random_cart
    from gpu_engine.solvers.ga.core import ga_arrays
    from gpu_engine.solvers.ga.solve import CPU_CONFIG, GPU_CONFIG, CpuPopulation

    arrays = ga_arrays(CartProblem.from_dict(random_cart(9999, 50)))

    def start(population_cls, config) -> None:
        population = population_cls(arrays, config, 0)
        population.initialise()
        population.elite(population.best()[0])

    out = {"ga_cpu_init_ms_per_line": _median_ms(lambda: start(CpuPopulation, CPU_CONFIG)) / 50}
    if gpu:
        from gpu_engine.solvers.ga.cuda import GpuPopulation

        out["ga_gpu_init_ms"] = _median_ms(lambda: start(GpuPopulation, GPU_CONFIG))
    return out


def calibrate(*, quick: bool = False, base: RateProfile | None = None) -> RateProfile:
    """Measure this machine; rates it cannot measure (no GPU) are taken from ``base``."""
    from gpu_engine.device import gpu_available, gpu_name

    gpu = gpu_available()
    base = base or read_profile(DEFAULT_PROFILE_PATH)
    values = base.to_dict()
    values.update(measure_full_search(gpu))
    values.update(measure_dp(gpu))
    values.update(measure_milp(quick))
    values.update(measure_ga(gpu))
    values["source"] = "calibrated"
    values["machine"] = {
        "cpu": platform.processor() or platform.machine(),
        "gpu": gpu_name() if gpu else None,
        "python": platform.python_version(),
        "measured_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "quick": quick,
    }
    return RateProfile.from_dict(values)


DESCRIPTION = "measure this machine's solver speeds and write the planner's profile"


def _add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=None, help="profile path to write")
    parser.add_argument("--quick", action="store_true", help="fewer, smaller MILP carts")


def register_command(subparsers) -> argparse.ArgumentParser:
    """Add ``calibrate`` to a CLI's subcommands (``python -m gpu_engine calibrate``)."""
    parser = subparsers.add_parser("calibrate", help=DESCRIPTION, description=DESCRIPTION)
    _add_options(parser)
    return parser


def run_command(args: argparse.Namespace) -> int:
    path = args.out or user_profile_path()
    profile = calibrate(quick=args.quick)
    profile.save(path)
    print(f"wrote {path}")
    for key, value in profile.to_dict().items():
        print(f"  {key}: {value}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gpu_engine.planning.calibrate", description=DESCRIPTION
    )
    _add_options(parser)
    return run_command(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
