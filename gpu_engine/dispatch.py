"""Which exact solver answers ``solve(..., algorithm="auto")``.

Kept to one small function so the planner (``gpu_engine/planner.py``, another engineer's) can
take the choice over without touching the solvers.
"""

from __future__ import annotations

from gpu_engine.problem import CartProblem

# Below this many assignments the CPU full search answers in well under a millisecond or two.
CPU_FULL_MAX_COMPLEXITY = 20_000


def choose_algorithm(problem: CartProblem, *, budget_ms: float | None = None) -> str:
    """Name of the exact solver for ``problem``: ``cpu-full`` for tiny carts, else ``cpu-full``
    until the faster exact solvers are registered."""
    del budget_ms
    from gpu_engine.solvers import SOLVERS

    if problem.complexity <= CPU_FULL_MAX_COMPLEXITY or "dp" not in SOLVERS:
        return "cpu-full"
    return "dp"
