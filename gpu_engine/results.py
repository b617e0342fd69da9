"""Turning a solver's raw answer (merchant index per line) into a checked :class:`Solution`."""

from __future__ import annotations

from typing import Any

import numpy as np

from gpu_engine.planning import rates
from gpu_engine.pricing import price_assignment
from gpu_engine.problem import CartProblem
from gpu_engine.solution import Solution


class SolverInconsistency(Exception):
    """A solver's claimed total disagrees with the pricing routine: a bug, never shown as an
    answer. Deliberately not a RuntimeError: the planner falls back to the CPU GA on run-time
    failures (a GPU gone, memory short), and a mispricing kernel must surface, not be hidden."""


def make_solution(
    problem: CartProblem,
    choice: np.ndarray,
    *,
    total: int,
    optimal: bool,
    algorithm: str,
    device: str,
    elapsed_ms: float,
    gap: float | None = None,
    stats: dict[str, Any] | None = None,
) -> Solution:
    """Re-price ``choice`` with the pricing routine and refuse a total that differs from the
    solver's own, so a kernel bug cannot reach a shopper as a wrong price."""
    breakdown = price_assignment(problem, np.asarray(choice, dtype=np.int64))
    priced = sum(c.cost for c in breakdown)
    if priced != int(total):
        raise SolverInconsistency(
            f"{algorithm}: solver total {int(total)} != priced total {priced} for {problem!r}"
        )
    f = problem.fulfillment
    assignment = {
        problem.item_ids[i]: f.owner_ids[int(f.column_owner[int(c)])] for i, c in enumerate(choice)
    }
    nodes = {problem.item_ids[i]: f.node_ids[int(c)] for i, c in enumerate(choice)}
    return Solution(
        total=priced,
        assignment=assignment,
        breakdown=breakdown,
        optimal=optimal,
        algorithm=algorithm,
        device=device,
        elapsed_ms=float(elapsed_ms),
        complexity=problem.complexity,
        estimates=rates.full_search_estimates(problem.complexity),
        gap=0.0 if optimal else gap,
        stats=dict(stats or {}),
        nodes=nodes,
    )
