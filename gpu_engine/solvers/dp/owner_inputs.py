"""The version 2 subset DPs' inputs on the host, shared by the CPU and CUDA runs: the DP's lines,
each merchant's (owner's) lines and their eligible nodes, and every owner's cost table
(:mod:`gpu_engine.solvers.dp.owners`), with the decoding of a DP answer to a column per line.

The exact DP's lines (its bits) are the lines that two or more merchants sell; a line that one
merchant alone sells is *bound* to it: present in every entry of that owner's table, its node
chosen inside the table. Folding such a line into a starting subtotal (as version 1 does) would
not be exact here: its node choice interacts with the split of the owner's other lines. An
owner with bound lines only is a constant (its table has one entry) and takes no DP layer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gpu_engine.problem import CapacityError, CartProblem
from gpu_engine.solvers.dp.owners import fill_rows, owner_tables

# Most placements (line -> absent or one of its nodes) enumerated for one owner's table: 4^11,
# e.g. 11 lines that two owners sell, one of them at 3 nodes each. Measured at 50-65 ns a
# placement (3 nodes with weight tiers, one shared CPU core): about 0.25 s for such a table;
# 4^12 would take a second before the DP starts.
MAX_OWNER_STATES = 4**11


@dataclass(frozen=True, eq=False)
class OwnerRows:
    """Who ships what, before any table is priced: per row (owner index, its DP lines in bit
    order, its bound lines), layers first; ``placements`` the tables' summed placement
    counts."""

    rows: list[tuple[int, np.ndarray, np.ndarray]]
    free: np.ndarray
    bit: np.ndarray
    col0: np.ndarray
    col1: np.ndarray
    placements: int

    @property
    def k(self) -> int:
        return int(self.free.size)

    def layer_sizes(self) -> list[int]:
        """The DP lines of each layer (owner with DP lines), in layer order."""
        return [int(r[1].size) for r in self.rows if r[1].size]

    def layer_steps(self) -> int:
        k = self.k
        return sum(2 ** (k - a) * 3**a for a in self.layer_sizes())

    def steps(self) -> int:
        """The DP's layer steps plus the placements priced for the tables."""
        return self.layer_steps() + self.placements

    def pick_dtype(self) -> np.dtype:
        return (
            np.dtype(np.uint16) if max(self.layer_sizes(), default=0) <= 16 else np.dtype(np.int32)
        )

    def memory_bytes(self) -> int:
        """The DP's layer tables (two of 2^k int64 and a choice table per layer) and the owner
        tables (cost and placement, int64)."""
        size = 1 << self.k
        layers = size * 8 * 2 + len(self.layer_sizes()) * size * self.pick_dtype().itemsize
        return layers + 16 * sum(1 << int(r[1].size) for r in self.rows)


@dataclass(frozen=True, eq=False)
class OwnerDPInputs:
    """Table rows are the owners that ship something (``owners``: owner index per row), the
    ``n_layers`` rows with DP lines first. Per row, ``line_of``/``radix``/``column`` describe
    its lines (free ones first, ``n_free`` of them, bit b = DP line ``lines[row, b]``) and
    their placements (free: 0 absent, d >= 1 option d - 1; bound: option d; option o is
    column ``column[row, j, o]``). ``cost``/``state`` are the tables at ``table_off``."""

    free: np.ndarray
    owners: np.ndarray
    n_layers: int
    mask: np.ndarray
    n_lines: np.ndarray
    lines: np.ndarray
    table_off: np.ndarray
    cost: np.ndarray
    state: np.ndarray
    line_of: np.ndarray
    line_count: np.ndarray
    radix: np.ndarray
    column: np.ndarray
    n_free: np.ndarray
    plan: OwnerRows

    @property
    def k(self) -> int:
        return int(self.free.size)

    @property
    def placements(self) -> int:
        return self.plan.placements

    @property
    def constant(self) -> int:
        """The summed cost of the owners without DP lines (each its table's one entry)."""
        rows = range(self.n_layers, self.owners.size)
        return sum(int(self.cost[self.table_off[r]]) for r in rows)

    def layer_steps(self) -> int:
        return self.plan.layer_steps()

    def steps(self) -> int:
        return self.plan.steps()

    def pick_dtype(self) -> np.dtype:
        return self.plan.pick_dtype()

    def memory_bytes(self) -> int:
        return self.plan.memory_bytes()

    def placement(self, row: int, entry: int) -> list[tuple[int, int]]:
        """(problem line, column) of each line shipped by table entry ``entry`` of ``row``."""
        state = int(self.state[int(self.table_off[row]) + entry])
        out = []
        for j in range(int(self.line_count[row])):
            r = int(self.radix[row, j])
            d, state = state % r, state // r
            opt = d - 1 if j < int(self.n_free[row]) else d
            if opt >= 0:
                out.append((int(self.line_of[row, j]), int(self.column[row, j, opt])))
        return out

    def choice(self, n_items: int, entries: list[int]) -> np.ndarray:
        """Column per problem line from each DP layer's chosen table entry (``entries``, one
        per layer row); owners without DP lines ship their one entry."""
        choice = np.full(n_items, -1, dtype=np.int64)
        picked = [*entries, *([0] * (self.owners.size - self.n_layers))]
        for row, entry in enumerate(picked):
            for line, column in self.placement(row, entry):
                choice[line] = column
        if (choice < 0).any():
            raise AssertionError(f"DP answer leaves lines {np.flatnonzero(choice < 0)} unassigned")
        return choice


def owner_dp_inputs(
    problem: CartProblem, *, every_line_free: bool = False, max_states: int = MAX_OWNER_STATES
) -> OwnerDPInputs:
    """The tables for ``problem`` (built here, on the CPU). ``every_line_free``: every line is
    a DP line (the relaxed partition DP), else only lines sold by two or more owners. Raises
    :class:`CapacityError` when an owner's placements exceed ``max_states``."""
    return owner_tables_of(problem, owner_rows(problem, every_line_free, max_states))


def _node_counts(problem: CartProblem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(eligible nodes of each owner for each line int64[N, M], first and end column of each
    owner): columns are grouped by owner and every owner has one."""
    f = problem.fulfillment
    owners = np.arange(f.n_owners)
    col0 = np.searchsorted(f.column_owner, owners, side="left")
    col1 = np.searchsorted(f.column_owner, owners, side="right")
    counts = np.add.reduceat((problem.price >= 0).astype(np.int64), col0, axis=1)
    return counts, col0, col1


def relaxed_placements(problem: CartProblem, max_states: int = MAX_OWNER_STATES) -> int | None:
    """The relaxed DP's tables' placements (every line free: 1 + its nodes at the owner),
    None when an owner's exceed ``max_states``; without building anything."""
    counts, _col0, _col1 = _node_counts(problem)
    # Floats: each product is exact below 2^53, and so is the sum of those under the limit.
    states = np.prod(1.0 + counts, axis=0)
    if states.size and states.max() > max_states:
        return None
    return int(states[states > 1].sum())


def owner_rows(
    problem: CartProblem, every_line_free: bool = False, max_states: int = MAX_OWNER_STATES
) -> OwnerRows:
    """:func:`owner_dp_inputs` without the tables (cheap: for plans and estimates)."""
    f = problem.fulfillment
    n = problem.n_items
    counts, col0, col1 = _node_counts(problem)
    sells = counts > 0
    is_free = np.ones(n, dtype=bool) if every_line_free else sells.sum(axis=1) > 1
    free = np.flatnonzero(is_free).astype(np.int64)
    bit = np.full(n, -1, dtype=np.int64)
    bit[free] = np.arange(free.size)
    # A free line's placements: absent or one of its nodes; a bound line's: one of its nodes.
    states = np.prod(np.where(sells, counts + is_free[:, None], 1).astype(np.float64), axis=0)
    over = np.flatnonzero(states > max_states)
    if over.size:
        o = int(over[0])
        radix = np.where(sells[:, o], counts[:, o] + is_free, 1)
        raise CapacityError(
            "items",
            n,
            f"the subset DP would price {math.prod(radix.tolist())} placements of merchant "
            f"{f.owner_ids[o]!r}'s lines over its nodes for this {n}-line cart, "
            f"more than its limit of {max_states}",
        )
    rows: list[tuple[int, np.ndarray, np.ndarray]] = []
    for owner in np.flatnonzero(sells.any(axis=0)):
        mine = np.flatnonzero(sells[:, owner])
        bound = mine[~is_free[mine]]
        # Bound lines with the most nodes first: a line with one node never moves (the
        # counter never carries into it).
        bound = bound[np.argsort(-counts[bound, owner], kind="stable")]
        rows.append((int(owner), mine[is_free[mine]], bound))
    # Owners with DP lines are the layers, first; the others are constants.
    rows.sort(key=lambda r: r[1].size == 0)
    placements = int(states[sells.any(axis=0)].sum())
    return OwnerRows(rows, free, bit, col0, col1, placements)


def owner_tables_of(problem: CartProblem, plan: OwnerRows) -> OwnerDPInputs:
    """The tables of ``plan`` (from :func:`owner_rows`), priced here on the CPU."""
    f = problem.fulfillment
    rows, col0, col1 = plan.rows, plan.col0, plan.col1
    n_rows = len(rows)
    width = max([1, *(r[1].size + r[2].size for r in rows)])
    n_nodes = max([1, *(int(col1[r[0]] - col0[r[0]]) for r in rows)])
    owners = np.array([r[0] for r in rows], dtype=np.int64)
    n_free = np.array([r[1].size for r in rows], dtype=np.int64)
    line_count = np.array([r[1].size + r[2].size for r in rows], dtype=np.int64)
    line_of = np.zeros((n_rows, width), dtype=np.int64)
    for r, (_o, ours, bound) in enumerate(rows):
        line_of[r, : ours.size] = ours
        line_of[r, ours.size : ours.size + bound.size] = bound
    n_layers = int(np.count_nonzero(n_free))
    radix = np.ones((n_rows, width), dtype=np.int64)
    column = np.zeros((n_rows, width, n_nodes), dtype=np.int64)
    local = np.zeros((n_rows, width, n_nodes), dtype=np.int64)
    amount = np.zeros((n_rows, width, n_nodes), dtype=np.int64)
    units = np.zeros((n_rows, width), dtype=np.int64)
    grams = np.zeros((n_rows, width), dtype=np.int64)
    lines = np.zeros((n_layers, max(1, int(n_free.max(initial=0)))), dtype=np.int32)
    mask = np.zeros(n_layers, dtype=np.int64)
    row_col0 = col0[owners].astype(np.int64)
    row_col1 = col1[owners].astype(np.int64)
    fill_rows(
        line_of, line_count, n_free, row_col0, row_col1, problem.price, problem.quantity,
        f.weight, plan.bit, radix, column, local, amount, units, grams, lines, mask,
    )  # fmt: skip
    table_off = np.zeros(n_rows + 1, dtype=np.int64)
    table_off[1:] = np.cumsum(np.int64(1) << n_free)
    cost = np.empty(int(table_off[-1]), dtype=np.int64)
    state = np.empty(int(table_off[-1]), dtype=np.int64)
    owner_tables(
        line_count,
        n_free,
        radix,
        local,
        amount,
        units,
        grams,
        row_col0,
        row_col1,
        table_off,
        problem.base_fee,
        problem.per_extra_unit,
        *f.parcel_params,
        *(np.ascontiguousarray(p[owners]) for p in f.owner_params),
        cost,
        state,
    )
    return OwnerDPInputs(
        free=plan.free,
        owners=owners,
        n_layers=n_layers,
        mask=mask,
        n_lines=n_free[:n_layers].astype(np.int32),
        lines=lines,
        table_off=table_off,
        cost=cost,
        state=state,
        line_of=line_of,
        line_count=line_count,
        radix=radix,
        column=column,
        n_free=n_free,
        plan=plan,
    )
