"""Where a warm start's batch warm-up spends its time: each step of
``gpu_engine.warmup._warm_batch`` on the GPU timed on its own (run it twice with one
NUMBA_CACHE_DIR and NUMBA_DEBUG_CACHE=1: the second run's "saved" lines name what numba
compiled again)."""

import time

t_start = time.perf_counter()
from numba import cuda  # noqa: E402

from gpu_engine import WARMUP_CART, CartProblem  # noqa: E402
from gpu_engine.batch import staging  # noqa: E402
from gpu_engine.batch.engine import solve_packed, solve_problems  # noqa: E402
from gpu_engine.batch.gpu import DEFAULT_VARIANT, SMALL_BATCH_VARIANT  # noqa: E402
from gpu_engine.batch.pack import DP, FULL, pack_problems  # noqa: E402


def step(name, fn):
    t0 = time.perf_counter()
    fn()
    print(f"STEP {name}: {time.perf_counter() - t0:.3f} s", flush=True)


print(f"STEP imports: {time.perf_counter() - t_start:.3f} s", flush=True)
problem = CartProblem.from_dict(WARMUP_CART)
step("cuda context", cuda.current_context)
for prefer in (FULL, DP):
    step(
        f"solve_problems gpu prefer={prefer}",
        lambda p=prefer: solve_problems([problem], device="gpu", prefer=p),
    )
step("staging.warm", staging.warm)
batch = pack_problems([problem])
for variant in (SMALL_BATCH_VARIANT, DEFAULT_VARIANT):
    for prefer in (FULL, DP):
        step(
            f"{variant} prefer={prefer}",
            lambda p=prefer, v=variant: solve_packed(batch, device="gpu", prefer=p, gpu_variant=v),
        )
