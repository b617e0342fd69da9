"""The version 2 side of ``--suite batch_mix``: carts of the mix's shape whose merchants ship
from 1 to 3 nodes with weight tiers (:func:`gpu_engine.bench.v2_family.v2_uniform_cart`: per
cart 3 to 14 lines, a market of 4 to 20 merchants, every line sold by the same number of them,
2 to 8, drawn per cart), solved by the batch's version 2 path
(:func:`gpu_engine.batch.v2.solve_v2`, exact full search over columns; carts over its budget
are planned TOO_LARGE and left to the per-cart planner) on the GPU and the CPU twin, with a
sample of the solved ones checked against the per-cart planner's proven optimum.

The carts are built as :class:`CartProblem` objects (Python, about a millisecond each), so
this part runs on thousands of carts, not millions.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from gpu_engine import solve
from gpu_engine.batch.pack import FULL, TOO_LARGE
from gpu_engine.batch.v2 import solve_v2
from gpu_engine.bench.v2_family import v2_uniform_cart
from gpu_engine.problem import CartProblem

SUITE = "batch_mix"
CHECK_SHARE = 0.01
CHECK_MIN = 20


def mix_v2_problems(n_carts: int, *, seed: int = 0) -> list[CartProblem]:
    """``n_carts`` version 2 carts of the mix (see the module docstring), deterministic."""
    rng = np.random.default_rng(seed)
    problems = []
    for c in range(n_carts):
        merchants = int(rng.integers(4, 21))
        lines = int(rng.integers(3, 15))
        offers = int(rng.integers(2, min(8, merchants) + 1))
        cart = v2_uniform_cart(lines, offers, merchants, seed * 1_000_003 + c, max_nodes=3)
        problems.append(CartProblem.from_dict(cart))
    return problems


def v2_rows(n_carts: int, *, seed: int, gpu: bool) -> list[dict[str, Any]]:
    t0 = time.perf_counter()
    problems = mix_v2_problems(n_carts, seed=seed)
    base = {"suite": SUITE, "case": f"{n_carts} carts (mix v2, 1-3 nodes)"}
    generate_s = time.perf_counter() - t0
    solve_v2(problems[:50], where="cpu")  # compilation is not engine time
    if gpu:
        solve_v2(problems[:50], where="gpu")
    rows = []
    answers = None
    for where in (["gpu"] if gpu else []) + ["cpu"]:
        t1 = time.perf_counter()
        got = solve_v2(problems, where=where)
        ms = (time.perf_counter() - t1) * 1e3
        answers = answers or got
        rows.append(
            {
                **base,
                "solver": f"v2 batch {where}",
                "engine_ms": round(ms, 1),
                "carts_per_s": round(n_carts / ms * 1e3),
                "full": int((got.method == FULL).sum()),
                "too_large": int((got.method == TOO_LARGE).sum()),
                "same_totals_as_first": bool(np.array_equal(got.total, answers.total)),
                **{key: round(value, 1) for key, value in got.timings.items()},
                "note": "pack (Python, per problem) + plan + search, from CartProblems",
            }
        )
    rows[0]["generate_s"] = round(generate_s, 1)
    assert answers is not None
    solved = np.flatnonzero(answers.method == FULL)
    count = max(CHECK_MIN, round(n_carts * CHECK_SHARE))
    sample = solved[np.unique(np.linspace(0, max(solved.size - 1, 0), count).astype(np.int64))]
    agree = 0
    t2 = time.perf_counter()
    for c in sample if solved.size else []:
        solution = solve(problems[int(c)])
        agree += int(solution.optimal and solution.total == int(answers.total[c]))
    rows.append(
        {
            **base,
            "solver": "v2 check vs per-cart planner",
            "checked": int(sample.size) if solved.size else 0,
            "agree": agree,
            "check_s": round(time.perf_counter() - t2, 1),
        }
    )
    return rows
