"""The drop heuristic's assignment as a warm start for HiGHS (version 2 carts polished by
exact descent). Apart from :mod:`gpu_engine.solvers.ga.core`, which the descent imports."""

from __future__ import annotations

import numpy as np

from gpu_engine.problem import CartProblem
from gpu_engine.solvers.ga.core import drop_greedy, ga_arrays
from gpu_engine.solvers.ga.cpu_v2 import polish


def drop_seed(problem: CartProblem) -> np.ndarray:
    """The drop heuristic's assignment (merchant index per line, a few ms): a warm start for
    HiGHS, so that its search starts near the optimum and a run cut at its deadline still has
    an answer."""
    arrays = ga_arrays(problem)
    row = np.empty(arrays.n_lines, dtype=np.int32)
    drop_greedy(row, arrays.qty, arrays.price, arrays.cand, arrays.params)
    if arrays.fulfil is not None:
        # On a version 2 cart the heuristic saw each node as a merchant of its own: exact
        # descent under the real rules follows (every pick stays one of the line's columns).
        polish(arrays, row)
    return arrays.to_original(row)
