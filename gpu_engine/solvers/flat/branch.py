"""Branch and bound on opening a merchant, best bound first, with the dual-ascent bound.

A node fixes some merchants open (their fee paid up front, zero in the node's fees) and some
closed (not allowed). Its bound is the fixed fees plus the node's dual bound; its primal is the
local search from its tight merchants, a feasible cart answer wherever it is found. A node whose
bound reaches the incumbent's total is closed (integers: nothing in it is cheaper). A node with
no tight merchant left to fix has bound equal to the cost of its fixed-open set, so it closes
by itself: the tree is finite. Branching is on the tight merchant that most overcovered lines
pay strictly above cost, the source of the gap between the dual and the primal.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass

import numba
import numpy as np

from gpu_engine.budget import expired
from gpu_engine.results import SolverInconsistency
from gpu_engine.solvers.flat.data import FlatData
from gpu_engine.solvers.flat.dual import dual_bound
from gpu_engine.solvers.flat.local import improve


@dataclass(eq=False)
class Node:
    """One subproblem: ``forced`` open, ``allowed`` False closed; its bound and dual state."""

    bound: int
    fee: np.ndarray
    allowed: np.ndarray
    forced: np.ndarray
    v: np.ndarray
    slack: np.ndarray
    reach: np.ndarray


@dataclass
class Search:
    """The best answer found (its open set) and the proven lower bound on the optimum."""

    total: int
    is_open: np.ndarray
    bound: int
    nodes: int = 0


def evaluate(
    data: FlatData,
    order: np.ndarray,
    fee: np.ndarray,
    allowed: np.ndarray,
    forced: np.ndarray,
    *,
    start: np.ndarray | None = None,
    with_adjust: bool = True,
) -> Node | None:
    """The node's dual bound (None: some line has no allowed merchant), from ``start`` (a dual
    feasible ``v`` for this node) when given, else from each line's cheapest merchant."""
    n, n_m = data.n_lines, data.n_merchants
    v = np.empty(n, dtype=np.int64) if start is None else start.copy()
    slack = np.empty(n_m, dtype=np.int64)
    reach = np.empty(n, dtype=np.int64)
    b = dual_bound(
        fee, allowed, order, data.cand, data.cand_cost, data.cand_count, v, slack, reach,
        with_adjust, start is not None,
    )  # fmt: skip
    if b == -1:
        return None
    if b < 0:
        raise SolverInconsistency("flat: the dual ascent left a negative slack")
    fixed = int(data.fee[forced].sum())
    return Node(fixed + int(b), fee, allowed, forced, v, slack, reach)


def primal(data: FlatData, node: Node) -> tuple[int, np.ndarray]:
    """(UFL total, open set) of the local search from the node's tight and forced merchants."""
    is_open = ((node.slack == 0) & node.allowed) | node.forced
    n = data.n_lines
    best = np.empty(n, dtype=np.int64)
    best_m = np.empty(n, dtype=np.int64)
    second = np.empty(n, dtype=np.int64)
    total = improve(
        is_open, node.allowed, data.fee, data.cost, data.cand, data.cand_cost, data.cand_count,
        best, best_m, second,
    )  # fmt: skip
    return int(total), is_open


@numba.njit(cache=True)
def branch_merchant(forced, allowed, cand, cand_cost, cand_count, v, slack, reach, fee):
    """The unfixed tight merchant to branch on: the one with the most overcoverage (sum of
    ``v - cost`` over lines that two tight merchants cover strictly), else the dearest tight
    one that some line reaches; -1 when none is left (the node is solved)."""
    n_m = slack.shape[0]
    score = np.zeros(n_m, dtype=np.int64)
    reached = np.zeros(n_m, dtype=np.bool_)
    for i in range(v.shape[0]):
        covering = 0
        for t in range(reach[i]):
            m = cand[i, t]
            if allowed[m]:
                reached[m] = True
                if slack[m] == 0 and cand_cost[i, t] < v[i]:
                    covering += 1
        if covering < 2:
            continue
        for t in range(reach[i]):
            m = cand[i, t]
            if allowed[m] and slack[m] == 0 and cand_cost[i, t] < v[i]:
                score[m] += v[i] - cand_cost[i, t]
    pick = -1
    for m in range(n_m):
        if forced[m] or not allowed[m] or slack[m] != 0 or not reached[m]:
            continue
        if pick < 0 or score[m] > score[pick] or (score[m] == score[pick] and fee[m] > fee[pick]):
            pick = m
    return pick


def branch_and_bound(
    data: FlatData,
    order: np.ndarray,
    root: Node,
    search: Search,
    *,
    at: float | None,
    max_nodes: int,
) -> Search:
    """Best-first search below ``root`` improving ``search`` in place until the tree closes,
    ``max_nodes`` nodes are bounded or the deadline ``at`` passes."""
    tie = itertools.count()
    heap: list[tuple[int, int, Node]] = [(root.bound, next(tie), root)]
    while heap:
        if heap[0][0] >= search.total:
            heap.clear()
            break
        if search.nodes >= max_nodes or expired(at):
            break
        _, _, node = heapq.heappop(heap)
        m = branch_merchant(
            node.forced, node.allowed, data.cand, data.cand_cost, data.cand_count,
            node.v, node.slack, node.reach, node.fee,
        )  # fmt: skip
        if m < 0:
            continue  # solved: its primal (the fixed-open set) already met its bound
        opened_fee, opened = node.fee.copy(), node.forced.copy()
        opened_fee[m] = 0
        opened[m] = True
        closed_allowed = node.allowed.copy()
        closed_allowed[m] = False
        # The parent's v stays feasible where m closes; where it opens (its fee paid up front,
        # zero in the node) no line may pay above its cost at m.
        for fee, allowed, forced, v in (
            (opened_fee, node.allowed, opened, np.minimum(node.v, data.cost[:, m])),
            (node.fee, closed_allowed, node.forced, node.v),
        ):
            child = evaluate(data, order, fee, allowed, forced, start=v)
            search.nodes += 1
            if child is None:
                continue
            # The child's lines are the parent's with fewer choices: its bound is also the
            # parent's (the dual ascent is a heuristic; it may come out lower on the child).
            child.bound = max(child.bound, node.bound)
            if child.bound >= search.total:
                continue
            total, is_open = primal(data, child)
            if total < search.total:
                search.total, search.is_open = total, is_open
            if child.bound < search.total:
                heapq.heappush(heap, (child.bound, next(tie), child))
    search.bound = search.total if not heap else min(search.total, heap[0][0])
    return search
