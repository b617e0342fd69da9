"""Exact solver for flat carts: dual bound, primal, branch and bound, all in integer cents.

The root's dual ascent and adjustment give a lower bound; the local search from its tight
merchants gives an answer (and a warm start, when given, another). The answer is proven optimal
when its total, re-priced by :func:`gpu_engine.pricing.total_of`, equals the bound; when
it does not, branch and bound closes the gap within the budget, or stops at it and reports the
best answer with the best bound.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpu_engine.budget import check_budget, deadline
from gpu_engine.pricing import total_of
from gpu_engine.problem import CartProblem, ProblemError
from gpu_engine.results import SolverInconsistency, make_solution
from gpu_engine.solution import Solution
from gpu_engine.solvers.flat.branch import Search, branch_and_bound, evaluate, primal
from gpu_engine.solvers.flat.data import INF, FlatData, flat_data
from gpu_engine.solvers.flat.local import assign, improve

# Nodes bounded before branch and bound gives up without a budget (a node costs up to about a
# millisecond on dense carts of 100 lines and stores).
MAX_NODES = 20_000


@dataclass(frozen=True)
class FlatResult:
    """``choice``: column index per line (int64; a merchant's node on a version 2 cart).
    ``total``: its exact price. ``bound``: a proven lower bound on the optimum. ``optimal``:
    ``total == bound``."""

    choice: np.ndarray
    total: int
    bound: int
    optimal: bool
    stats: dict[str, Any] = field(default_factory=dict)


def _choice(data: FlatData, is_open: np.ndarray) -> np.ndarray:
    n = data.n_lines
    best = np.empty(n, dtype=np.int64)
    best_m = np.empty(n, dtype=np.int64)
    second = np.empty(n, dtype=np.int64)
    assign(is_open, data.cand, data.cand_cost, data.cand_count, best, best_m, second)
    return best_m


def _warm_open(problem: CartProblem, data: FlatData, warm_start: Any) -> tuple[int, np.ndarray]:
    """(UFL total, open set) of the local search from the merchants ``warm_start`` uses."""
    choice = np.asarray(warm_start)
    if choice.shape != (problem.n_items,) or choice.dtype.kind not in "iu":
        raise ProblemError("warm_start", choice.shape, "must be one merchant index per line")
    choice = choice.astype(np.int64)
    ok = (choice >= 0) & (choice < problem.n_merchants)
    if not ok.all() or (problem.price[np.arange(problem.n_items), choice] < 0).any():
        raise ProblemError("warm_start", warm_start, "must pick an eligible offer on every line")
    is_open = np.zeros(data.n_merchants, dtype=np.bool_)
    is_open[choice] = True
    n = data.n_lines
    scratch = [np.empty(n, dtype=np.int64) for _ in range(3)]
    allowed = np.ones(data.n_merchants, dtype=np.bool_)
    total = improve(
        is_open, allowed, data.fee, data.cost, data.cand, data.cand_cost, data.cand_count,
        *scratch,
    )  # fmt: skip
    return int(total), is_open


def solve_flat(
    problem: CartProblem,
    *,
    budget_ms: float | None = None,
    warm_start: Any = None,
    max_nodes: int = MAX_NODES,
) -> FlatResult:
    """The cheapest assignment of a flat cart, proven where the bound meets it.

    Raises :class:`~gpu_engine.problem.CapacityError` when the cart is not flat
    (:func:`gpu_engine.solvers.flat.data.is_flat`; on a version 2 cart its subclass
    :class:`~gpu_engine.problem.FulfillmentUnsupported`). ``budget_ms`` and ``max_nodes`` limit
    branch and bound; the root always runs (a few ms at most). ``warm_start``, a column index
    per line (the drop heuristic's answer, say), seeds a second local search.
    """
    budget_ms = check_budget(budget_ms)
    t0 = time.perf_counter()
    data = flat_data(problem)
    order = np.argsort(data.cand_count, kind="stable").astype(np.int64)
    n_m = data.n_merchants
    root = evaluate(
        data, order, data.fee.copy(), np.ones(n_m, dtype=np.bool_), np.zeros(n_m, dtype=np.bool_)
    )
    if root is None:  # the problem guarantees an eligible offer per line
        raise SolverInconsistency("flat: a line has no eligible offer")
    total, is_open = primal(data, root)
    stats: dict[str, Any] = {"root_bound": root.bound, "root_total": total}
    if warm_start is not None:
        warm_total, warm_is_open = _warm_open(problem, data, warm_start)
        stats["warm_total"] = warm_total
        if warm_total < total:
            total, is_open = warm_total, warm_is_open
    search = Search(total, is_open, root.bound)
    if total > root.bound:
        branch_and_bound(data, order, root, search, at=deadline(t0, budget_ms), max_nodes=max_nodes)
    choice = _choice(data, search.is_open)
    priced = total_of(problem, choice)
    if search.total >= INF or priced != search.total or priced < search.bound:
        raise SolverInconsistency(
            f"flat: total {search.total}, priced {priced}, bound {search.bound} for {problem!r}"
        )
    optimal = priced == search.bound
    stats.update(
        nodes=search.nodes,
        proof=None if not optimal else "dual bound" if search.nodes == 0 else "branch and bound",
        cut=not optimal,
    )
    return FlatResult(choice, priced, search.bound, optimal, stats)


def solve_flat_solution(problem: CartProblem, *, budget_ms: float | None = None) -> Solution:
    """:func:`solve_flat` as a :class:`~gpu_engine.solution.Solution` (algorithm "flat"):
    optimal when proven, else with the proven relative gap."""
    t0 = time.perf_counter()
    result = solve_flat(problem, budget_ms=budget_ms)
    gap = (result.total - result.bound) / result.total if result.total else 0.0
    stats = {**result.stats, "bound": result.bound}
    return make_solution(
        problem,
        result.choice,
        total=result.total,
        optimal=result.optimal,
        algorithm="flat",
        device="cpu",
        elapsed_ms=(time.perf_counter() - t0) * 1e3,
        gap=gap,
        stats=stats,
    )
