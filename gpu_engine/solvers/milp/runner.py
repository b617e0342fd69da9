"""Running the cart's MILP (:mod:`gpu_engine.solvers.milp.model`) in HiGHS under a hard deadline.

HiGHS runs in a solver process of its own (:mod:`gpu_engine.solvers.milp.highs_process`): a
crash inside it fails the run (status :data:`CRASH_STATUS`), never the caller. The program is
built here, in Python, checking the deadline between merchants; the child gets it as flat
arrays. A time limit is a hard deadline: HiGHS's own ``time_limit`` is checked only between its
steps, so past the deadline the run is cancelled (HiGHS stops at its next interrupt check) and
the caller returns at once with ``cut=True`` and no HiGHS answer: the warm start, if any,
stands, never claimed optimal.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpu_engine.pricing import assignment_cost, total_of
from gpu_engine.problem import BudgetError, CapacityError, CartProblem
from gpu_engine.results import make_solution
from gpu_engine.solution import Solution
from gpu_engine.solvers.ga.solve import lower_bound
from gpu_engine.solvers.milp import highs_process
from gpu_engine.solvers.milp.model import (
    HIGHS_MAX_MONEY,
    BuildCancelled,
    MilpModel,
    choice_from_x,
    highs_trusted,
    milp_build,
    milp_point,
    money_scale,
)

logger = logging.getLogger(__name__)

# Costs are integral: an absolute gap below one cent proves optimality.
_ABS_GAP = 1.0 - 1e-6
# Slack on HiGHS's floating-point bound before rounding it up to whole cents.
_BOUND_SLACK = 1e-4
# HiGHS checks its clock between steps and overshoots a little: its limit is cut by this share
# and margin so that build + solve stay within the caller's time.
_LIMIT_SHARE = 0.9
_LIMIT_MARGIN_MS = 3.0
# One thread by default: HiGHS's branch and bound gains little from more on these models, the
# calibrated profile is measured with one, and HiGHS fixes its thread pool at the first solve
# of a process.
DEFAULT_THREADS = 1
# The status of a run stopped by its deadline before HiGHS answered (build or HiGHS still busy).
CUT_STATUS = "Cut at the deadline"
# HiGHS's ``passModel`` (it copies and checks the program, uninterruptibly) takes about this many
# ms per nonzero: twice the 50-65 ns seen on a large cart, for a loaded machine. A hand-off
# predicted to end past the deadline is not started.
_PASS_MS_PER_NONZERO = 130e-6
# Gathering the program into HiGHS's arrays (``_Model.arrays``): ~45 ns a nonzero there, doubled.
_ARRAYS_MS_PER_NONZERO = 90e-6
# Below this many ms left after the build, HiGHS is not started: it cannot even set up.
_MIN_HIGHS_MS = 1.0
# HiGHS's presolve when proving a warm start after the GA (the planner's route): off. With the
# GA's answer as incumbent HiGHS's bound rises mostly by reduced-cost fixing and restarts, and
# the full presolve before the root LP is the slower part (suite ``families_bound``).
PROOF_PRESOLVE = False
# HiGHS's primal heuristics when proving a warm start after the GA: off. They look for
# incumbents (feasibility jump first, then RINS, RENS, reduced-cost rounding), and the GA's
# answer is one; their time goes to the bound instead, and proofs take less CPU without them.
PROOF_HEURISTICS = False
_NO_HEURISTICS: dict[str, bool | float] = {
    "mip_heuristic_effort": 0.0,
    "mip_heuristic_run_feasibility_jump": False,
    "mip_heuristic_run_rins": False,
    "mip_heuristic_run_rens": False,
    "mip_heuristic_run_root_reduced_cost": False,
}
# HiGHS's MIP feasibility tolerance (suite ``highs_numerics``): a tenth of a cent of the largest
# row, between two bounds. At the default (1e-6) HiGHS proves totals above the optimum once rows
# reach ~1e7 cents; far below 1e-8 it crashes or proves wrong optima.
_ROW_CENTS = 0.1
_DEFAULT_FEASIBILITY = 1e-6
_MIN_FEASIBILITY = 1e-8
# The status of a run not started because of that limit.
MONEY_STATUS = "Amounts beyond HiGHS's exact range"
# The status of a run whose solver process died (HiGHS crashed): a route that failed.
CRASH_STATUS = "HiGHS crashed"
# HiGHS's statuses that end a run without its failing: a proof, its own time limit, the
# caller's cancel, the deadline passing first, or amounts beyond its range (not run).
_ENDED = frozenset(
    {"Optimal", "Time limit reached", "Interrupted by user", CUT_STATUS, MONEY_STATUS}
)


@dataclass(frozen=True, slots=True)
class MilpOutcome:
    """HiGHS's answer before it becomes a :class:`Solution`.

    ``choice``: column (merchant, or a version 2 cart's node) index per line (int64), or None
    when HiGHS found no feasible point in
    its time. ``bound``: HiGHS's dual bound in cents (-inf when none).
    """

    choice: np.ndarray | None
    bound: float
    status: str
    build_ms: float
    solve_ms: float
    n_cols: int
    n_rows: int
    cut: bool = False
    # The relaxation's column values (``relaxed`` runs that HiGHS solved to optimality only):
    # the large-neighbourhood steps read them (:mod:`gpu_engine.solvers.milp.neighbourhood`).
    values: np.ndarray | None = None

    @property
    def failed(self) -> bool:
        """See :func:`highs_failed`."""
        return highs_failed(self.status)


def highs_failed(status: str) -> bool:
    """HiGHS ended in error (crashed, "Solve error", "Infeasible" on a cart that always has an
    assignment...), not by proving, by a limit, or by not being run on amounts beyond its
    range: a route that failed, whose bound is not believed."""
    return status not in _ENDED


@dataclass(frozen=True, slots=True)
class ColumnBounds:
    """New bounds for some columns of a built program (a neighbourhood fixes or drops them)."""

    cols: np.ndarray  # int32
    lower: np.ndarray  # float64
    upper: np.ndarray  # float64


def milp_run(
    problem: CartProblem,
    *,
    time_limit_ms: float | None = None,
    warm_start: np.ndarray | None = None,
    threads: int | None = DEFAULT_THREADS,
    relaxed: bool = False,
    presolve: bool = True,
    heuristics: bool = True,
    model: MilpModel | None = None,
    bounds: ColumnBounds | None = None,
    lane: int = 0,
    stop: threading.Event | None = None,
) -> MilpOutcome:
    """Build and solve the program (``relaxed``: its LP relaxation, whose optimum is the outcome's
    ``bound`` and which gives no choice; :mod:`gpu_engine.bounds.lp`). ``warm_start``: a merchant
    index per line (a feasible assignment, e.g. the GA's) handed to HiGHS as its first
    incumbent. ``time_limit_ms`` counts the model build too and is a hard deadline (see the
    module docstring): past it the outcome has ``cut=True``, status :data:`CUT_STATUS` and no
    choice. ``threads``: HiGHS's thread count (None: HiGHS's own choice). ``presolve=False``
    skips HiGHS's presolve (its restarts after reduced-cost fixing still run): for proving a
    warm start, where it is often the slower part (see :data:`PROOF_PRESOLVE`). ``heuristics=False``
    turns HiGHS's primal heuristics off (see :data:`PROOF_HEURISTICS`). ``model``: the cart's
    program built already (several runs on one cart share its build, and the compact form,
    :mod:`gpu_engine.solvers.milp.compact`, comes this way); ``bounds``: columns whose bounds
    this run changes (the warm start must respect them). ``lane``: which of this process's
    solver processes runs it; ``stop``: an event another thread sets to cut the run at once."""
    started = time.perf_counter()
    deadline = None if time_limit_ms is None else started + time_limit_ms / 1e3
    clock = _Deadline(started, deadline)
    money = money_scale(problem) if model is None else model.money
    if not highs_trusted(money):
        return MilpOutcome(None, -math.inf, MONEY_STATUS, 0.0, 0.0, 0, 0)
    shape = (0, 0)
    try:
        milp = (
            model
            if model is not None
            else program_build(problem, cancelled=clock.expired, money=money)
        )
        shape = (milp.n_cols, milp.n_rows)
        request = _request(
            milp,
            warm_start,
            threads,
            relaxed=relaxed,
            presolve=presolve,
            heuristics=heuristics,
            expires_within=clock.expires_within,
            bounds=bounds,
        )
    except BuildCancelled:
        return clock.cut_outcome(shape)
    clock.build_ms = (time.perf_counter() - started) * 1e3
    if deadline is not None:
        # HiGHS's own limit: what is left, less a margin for its late clock checks.
        limit_ms = clock.left_ms() * _LIMIT_SHARE - _LIMIT_MARGIN_MS
        if limit_ms < _MIN_HIGHS_MS:
            return clock.cut_outcome(shape)
        request["time_limit"] = limit_ms / 1e3
    reply = highs_process.run(request, deadline, lane=lane, stop=stop)
    if reply is highs_process.CUT:
        return clock.cut_outcome(shape)
    if isinstance(reply, highs_process.Failure):
        return clock.failed_outcome(milp, CRASH_STATUS)
    if "error" in reply:
        logger.warning("HiGHS failed on a cart's program: %s", reply["error"])
        return clock.failed_outcome(milp, f"HiGHS error ({reply['error']})")
    return clock.outcome(problem, milp, reply, relaxed=relaxed)


class _Deadline:
    """One run's clock: when it started, its deadline (None: none) and the build's time."""

    def __init__(self, started: float, deadline: float | None) -> None:
        self.started = started
        self.deadline = deadline
        self.build_ms: float | None = None

    def expired(self) -> bool:
        return self.expires_within(0.0)

    def expires_within(self, ms: float) -> bool:
        return self.deadline is not None and time.perf_counter() + ms / 1e3 >= self.deadline

    def left_ms(self) -> float:
        assert self.deadline is not None, "only runs with a deadline have time left"
        return max(0.0, self.deadline - time.perf_counter()) * 1e3

    def _times(self) -> tuple[float, float]:
        elapsed = (time.perf_counter() - self.started) * 1e3
        build = elapsed if self.build_ms is None else self.build_ms
        return build, elapsed - build

    def cut_outcome(self, shape: tuple[int, int]) -> MilpOutcome:
        build, solve = self._times()
        return MilpOutcome(None, -math.inf, CUT_STATUS, build, solve, *shape, cut=True)

    def failed_outcome(self, milp: MilpModel, status: str) -> MilpOutcome:
        build, solve = self._times()
        return MilpOutcome(None, -math.inf, status, build, solve, milp.n_cols, milp.n_rows)

    def outcome(
        self, problem: CartProblem, milp: MilpModel, reply: dict[str, Any], *, relaxed: bool
    ) -> MilpOutcome:
        build, solve = self._times()
        choice = values = None
        if relaxed:
            bound = reply["objective"] if reply["optimal"] else -math.inf
            values = reply["values"] if reply["optimal"] else None
        else:
            bound = reply["dual_bound"]
            if reply["feasible"]:
                choice = choice_from_x(problem, milp, reply["values"][: milp.x_line.size])
        return MilpOutcome(
            choice=choice,
            bound=bound if math.isfinite(bound) else -math.inf,
            status=reply["status"],
            build_ms=build,
            solve_ms=solve,
            n_cols=milp.n_cols,
            n_rows=milp.n_rows,
            values=values,
        )


def _request(
    milp: MilpModel,
    warm_start,
    threads,
    *,
    relaxed=False,
    presolve=True,
    heuristics=True,
    expires_within: Callable[[float], bool] | None = None,
    bounds: ColumnBounds | None = None,
) -> dict[str, Any]:
    """The solver process's request for this program (:mod:`highs_child`): the program's
    arrays, HiGHS's options, the warm start as column values, the changed bounds. Gathering the
    arrays and HiGHS's ``passModel`` (uninterruptible, in the child) are the larger part of a
    10,000-line cart's build: ``expires_within(ms)`` (True when the deadline passes within
    ``ms``) is asked with their predicted time before them, and the run stops here
    (:class:`BuildCancelled`) rather than start a step it cannot finish in time."""

    def check(ahead_ms: float = 0.0) -> None:
        if expires_within is not None and expires_within(ahead_ms):
            raise BuildCancelled

    check(milp.model.nonzeros() * (_ARRAYS_MS_PER_NONZERO + _PASS_MS_PER_NONZERO))
    arrays = milp.model.arrays()
    check(arrays.index.size * _PASS_MS_PER_NONZERO)
    options: dict[str, bool | float | int | str] = {
        "mip_rel_gap": 0.0,
        "mip_abs_gap": _ABS_GAP,
        "mip_feasibility_tolerance": feasibility_tolerance(milp.money),
    }
    if threads is not None:
        options["threads"] = int(threads)
    if not presolve:
        options["presolve"] = "off"
    if not heuristics:
        options.update(_NO_HEURISTICS)
    start = None
    if warm_start is not None and not relaxed:
        start = milp_point(milp, warm_start)
        check()
    column_bounds = None
    if bounds is not None:
        column_bounds = (bounds.cols, bounds.lower, bounds.upper)
    return {
        "kind": "solve",
        "program": arrays.as_dict(),
        "options": options,
        "bounds": column_bounds,
        "start": start,
        "relaxed": relaxed,
        "time_limit": None,
    }


def feasibility_tolerance(money: float) -> float:
    """HiGHS's MIP feasibility tolerance for a program whose largest row holds ``money`` cents:
    a tenth of a cent of that row, within the measured bounds (see ``_ROW_CENTS``)."""
    return min(_DEFAULT_FEASIBILITY, max(_MIN_FEASIBILITY, _ROW_CENTS / max(money, 1.0)))


def milp_proves(total: int, bound: float) -> bool:
    """An integral ``total`` is optimal when HiGHS's dual ``bound`` rounds up to it."""
    return math.isfinite(bound) and total <= math.ceil(bound - _BOUND_SLACK)


def solve_milp(
    problem: CartProblem,
    *,
    budget_ms: float | None = None,
    warm_start: np.ndarray | None = None,
    threads: int | None = DEFAULT_THREADS,
    presolve: bool = True,
    heuristics: bool = True,
) -> Solution:
    """Exact HiGHS solve of ``problem``. Within ``budget_ms`` it returns a proven optimum;
    otherwise HiGHS's best incumbent (never worse than ``warm_start``) with ``optimal=False`` and
    ``gap`` = (total - bound) / total, the bound being the better of HiGHS's and
    :func:`gpu_engine.solvers.ga.solve.lower_bound`. ``budget_ms`` is a hard deadline: a run cut by
    it keeps the warm start (``stats["cut"]``, status :data:`CUT_STATUS`). Raises BudgetError when
    no feasible point is known (no warm start and no HiGHS incumbent in the time). Version 2
    carts (several nodes, weight tiers) run on :mod:`gpu_engine.solvers.milp.fulfilled`'s
    program; ``warm_start`` is then a column index per line."""
    solution, outcome = milp_best(
        problem,
        budget_ms=budget_ms,
        warm_start=warm_start,
        threads=threads,
        presolve=presolve,
        heuristics=heuristics,
    )
    if outcome.status == MONEY_STATUS:
        raise CapacityError(
            "money",
            money_scale(problem),
            _beyond_range(problem),
        )
    if solution is None:
        raise BudgetError("budget_ms", budget_ms, _no_assignment(outcome))
    return solution


def _beyond_range(problem: CartProblem) -> str:
    """Why ``algorithm="milp"`` refuses a cart beyond HiGHS's exact range, and who takes it."""
    if problem.simple:
        return (
            f"HiGHS is exact to the cent only while a merchant's goods, threshold and shipping "
            f"stay within {HIGHS_MAX_MONEY:.0e} cents; the dp, full and ga algorithms take this "
            "cart"
        )
    return (
        f"HiGHS is exact to the cent only while a merchant's goods, threshold, a parcel's fee "
        f"and its grams stay within {HIGHS_MAX_MONEY:.0e}; auto, cpu-full, gpu-full and cpu-ga "
        "take this cart"
    )


def _no_assignment(outcome: MilpOutcome) -> str:
    """Why HiGHS gave no assignment, in the words a caller can act on."""
    if not outcome.failed:
        return f"HiGHS found no assignment in time ({outcome.status})"
    if outcome.status == "Infeasible":
        # Every accepted cart has an assignment: an "Infeasible" is HiGHS's numerics failing.
        return "HiGHS wrongly reported the cart infeasible (numerical trouble); use dp, full or ga"
    return f"HiGHS failed on this cart ({outcome.status}); use dp, full or ga"


def solve_milp_seeded(problem: CartProblem, *, budget_ms: float | None = None) -> Solution:
    """``algorithm="milp"``: :func:`solve_milp` warm-started with the drop heuristic's answer
    (:func:`gpu_engine.solvers.ga.seeds.drop_seed`, a few ms), so that a run its budget cuts
    still answers, unproven, instead of refusing."""
    from gpu_engine.solvers.ga.seeds import drop_seed

    return solve_milp(problem, budget_ms=budget_ms, warm_start=drop_seed(problem))


def milp_best(
    problem: CartProblem,
    *,
    budget_ms: float | None = None,
    warm_start: np.ndarray | None = None,
    threads: int | None = DEFAULT_THREADS,
    presolve: bool = True,
    heuristics: bool = True,
) -> tuple[Solution | None, MilpOutcome]:
    """:func:`solve_milp` that answers None (with HiGHS's outcome, its bound included) where that
    one raises: the anytime routes run HiGHS first without a warm start and go on without it."""
    started = time.perf_counter()
    outcome = milp_run(
        problem,
        time_limit_ms=budget_ms,
        warm_start=warm_start,
        threads=threads,
        presolve=presolve,
        heuristics=heuristics,
    )
    return milp_answer(problem, outcome, warm_start=warm_start, started=started), outcome


def milp_answer(
    problem: CartProblem,
    outcome: MilpOutcome,
    *,
    warm_start: np.ndarray | None,
    started: float,
) -> Solution | None:
    """HiGHS's ``outcome`` as an answer: the better of its assignment and the warm start, priced
    exactly, proven where the bound rounds up to it (None: no assignment at all)."""
    choice = outcome.choice
    if warm_start is not None:
        warm = np.asarray(warm_start, dtype=np.int64)
        if choice is None or _cost(problem, warm) < _cost(problem, choice):
            choice = warm
    if choice is None:
        return None
    total = _cost(problem, choice)
    # HiGHS's bound is weak (even negative) early on; a price-only bound never is.
    bound = max(outcome.bound, float(price_bound(problem)))
    proven = milp_proves(total, bound)
    gap = None if proven or total == 0 else max(0.0, (total - bound) / total)
    return make_solution(
        problem,
        choice,
        total=total,
        optimal=proven,
        algorithm="milp",
        device="cpu",
        elapsed_ms=(time.perf_counter() - started) * 1e3,
        gap=gap,
        stats={
            "highs_status": outcome.status,
            "bound": bound,
            "highs_bound": outcome.bound if math.isfinite(outcome.bound) else None,
            "build_ms": outcome.build_ms,
            "solve_ms": outcome.solve_ms,
            "columns": outcome.n_cols,
            "rows": outcome.n_rows,
            "warm_start": warm_start is not None,
            "cut": outcome.cut,
        },
    )


def cents_bound(bound: float) -> int | None:
    """A floating-point dual bound as a proven bound in whole cents (None: no bound)."""
    if not math.isfinite(bound):
        return None
    return max(0, math.ceil(bound - _BOUND_SLACK))


def _cost(problem: CartProblem, choice: np.ndarray) -> int:
    if not problem.simple:
        return total_of(problem, choice)
    return int(assignment_cost(choice, problem.quantity, problem.price, *problem.merchant_params))


def program_build(
    problem: CartProblem,
    *,
    cancelled: Callable[[], bool] | None = None,
    money: float | None = None,
) -> MilpModel:
    """The cart's exact program: :func:`~gpu_engine.solvers.milp.model.milp_build`'s, which is
    :func:`~gpu_engine.solvers.milp.fulfilled.fulfilled_build`'s for a version 2 cart."""
    return milp_build(problem, cancelled=cancelled, money=money)


def price_bound(problem: CartProblem) -> int:
    """A proven lower bound from prices alone: the GA's
    (:func:`gpu_engine.solvers.ga.solve.lower_bound`) on a simple cart,
    :func:`~gpu_engine.solvers.milp.fulfilled.fulfilled_price_bound` on a version 2 one."""
    if problem.simple:
        return lower_bound(problem)
    from gpu_engine.solvers.milp.fulfilled import fulfilled_price_bound

    return fulfilled_price_bound(problem)
