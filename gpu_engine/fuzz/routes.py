"""The routes a fuzz run exercises: ``auto`` (the planner) and every registered solver, each
called through :func:`gpu_engine.solve` as the service calls it; plus the fault routes of
:mod:`gpu_engine.fuzz.faults`, run only when named."""

from __future__ import annotations

from collections.abc import Callable

from gpu_engine.problem import CartProblem, ProblemError
from gpu_engine.solution import Solution

Route = Callable[[CartProblem, float | None, int], Solution]

# Routes that search exhaustively with no budget: skipped on carts past their reach.
FULL_SEARCH = frozenset({"cpu-full", "gpu-full"})
SUBSET_DP = frozenset({"dp", "cpu-dp", "gpu-dp"})
# Exact methods of independent make: a total two of them prove alike is the optimum.
EXACT_FAMILIES = {"full": FULL_SEARCH, "dp": SUBSET_DP, "milp": frozenset({"milp"})}


def default_routes(*, include_gpu: bool) -> list[str]:
    """``auto`` and the registry's solvers; the ``gpu-*`` ones only where a real GPU is."""
    from gpu_engine.solvers.registry import SOLVERS

    names = ["auto", *SOLVERS]
    return [n for n in names if include_gpu or not n.startswith("gpu-")]


def known_routes() -> list[str]:
    from gpu_engine.fuzz.faults import FAULTS
    from gpu_engine.solvers.registry import SOLVERS

    return ["auto", *SOLVERS, *FAULTS]


def resolve(name: str) -> Route:
    """The callable behind a route name (ProblemError for an unknown one)."""
    from gpu_engine.fuzz.faults import FAULTS

    if name in FAULTS:
        return FAULTS[name]
    if name != "auto":
        from gpu_engine.solvers.registry import SOLVERS

        if name not in SOLVERS:
            raise ProblemError("routes", name, f"must be one of {', '.join(known_routes())}")

    def run(problem: CartProblem, budget_ms: float | None, seed: int) -> Solution:
        from gpu_engine.entry import solve

        return solve(problem, algorithm=name, budget_ms=budget_ms, seed=seed)

    return run
