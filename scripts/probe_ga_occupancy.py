"""Device probe (issue 13): GPU GA generation time against the kernels' shared-memory sizing
and block size.

NUMBA_CACHE_DIR=$(mktemp -d) python scripts/probe_ga_occupancy.py MAX_MERCHANTS THREADS

The kernels read ``MAX_MERCHANTS`` when they compile (lazily, at their first launch): a fresh
cache directory per run keeps an earlier build from being loaded. One JSON line per cart: the
GA's ms per generation over 40 generations (no budget, stall off) and its total.
"""

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpu_engine import CartProblem
from gpu_engine.bench.family_carts import FAMILIES
from gpu_engine.solvers.ga import cuda as ga_cuda
from gpu_engine.solvers.ga.core import ga_arrays
from gpu_engine.solvers.ga.loop import evolve
from gpu_engine.solvers.ga.solve import GPU_CONFIG

GENERATIONS = 40


def timed(problem: CartProblem, threads: int) -> tuple[float, int]:
    config = GPU_CONFIG.with_(max_generations=GENERATIONS, stall_generations=10_000)
    population = ga_cuda.GpuPopulation(ga_arrays(problem), config, 0, threads=threads)
    t0 = time.perf_counter()
    run = evolve(population, config=config, budget_ms=None, started=t0)
    return (time.perf_counter() - t0) * 1e3 / GENERATIONS, run.total


def main(max_merchants: int, threads: int) -> None:
    ga_cuda.MAX_MERCHANTS = max_merchants
    warm = CartProblem.from_dict(FAMILIES["mixed"](7, 60))
    timed(warm, threads)
    for family in ("threshold_deep", "zero_ties", "split_punish", "large_qty", "mixed"):
        for k in (0, 1):
            problem = CartProblem.from_dict(FAMILIES[family](200 * 1000 + k, 200))
            ms, total = timed(problem, threads)
            row = {"max_merchants": max_merchants, "threads": threads}
            print(
                json.dumps(
                    {
                        **row,
                        "cart": f"{family} 200 #{k}",
                        "ms_per_gen": round(ms, 3),
                        "total": total,
                    }
                ),
                flush=True,
            )


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
