"""Running the cart's MILP (:mod:`gpu_engine.solvers.milp.model`) in HiGHS under a hard deadline.

A time limit is a hard deadline. HiGHS's own ``time_limit`` is checked only between steps: on
the H200 host a 200 ms planner budget overran by up to 1.22 x when a proof after the GA was
given tens of ms, and here (a shared two-core machine) HiGHS's first interrupt check came 30 to
170 ms into a run on 30-50 line carts. So the build checks the deadline between merchants,
HiGHS runs on a worker thread (it releases the GIL) while the caller waits until the deadline,
and past it the caller trips ``Highs.cancelSolve`` (HiGHS stops at its next interrupt check)
and returns at once with ``cut=True`` and no HiGHS answer: the warm start, if any, stands,
never claimed optimal. The abandoned worker ends on its own shortly
after (its time limit, the interrupt; a process exiting meanwhile waits for it); HiGHS runs
one at a time in the process (a lock), so a straggler can delay the next proof but never
overlap it.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gpu_engine.pricing import assignment_cost
from gpu_engine.problem import BudgetError, CapacityError, CartProblem
from gpu_engine.results import make_solution
from gpu_engine.solution import Solution
from gpu_engine.solvers.ga.solve import lower_bound
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
# HiGHS's primal_solution_status for "a feasible point is known".
_SOLUTION_FEASIBLE = 2
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
# ms per nonzero: 50-65 ns here on a 10,000-line cart (690,000 nonzeros, 34-45 ms); twice that,
# for a loaded machine. A hand-off predicted to end past the deadline is not started.
_PASS_MS_PER_NONZERO = 130e-6
# Gathering the program into HiGHS's arrays (``_Model.arrays``): ~45 ns a nonzero there, doubled.
_ARRAYS_MS_PER_NONZERO = 90e-6
# Below this many ms left after the build, HiGHS is not started: it cannot even set up.
_MIN_HIGHS_MS = 1.0
# HiGHS's presolve when proving a warm start after the GA (the planner's route): off. With the
# GA's answer as incumbent HiGHS's bound rises mostly by reduced-cost fixing and restarts, and
# the full presolve before the root LP was the slower part: on issue 13's families (32 carts of
# 50-200 lines, warm-started with the optimum, one thread; suite ``families_bound``,
# BENCHMARKS.md) 21 proofs took at most 450 ms of CPU without it against 16 with it; past ~1 s
# the two were within two carts of each other.
PROOF_PRESOLVE = False
# HiGHS's primal heuristics when proving a warm start after the GA: off. They look for
# incumbents (feasibility jump first, then RINS, RENS, reduced-cost rounding), and the GA's
# answer is one; their time goes to the bound instead. On issue 13's hardest families (24 carts
# of threshold_deep 50/200, large_qty, split_punish and mixed 200, mixed 50, warm-started with
# the optimum, one thread, presolve off) HiGHS's proof took 5-30% less CPU without them (e.g.
# 312 -> 257 ms, 126 -> 87 ms), proving 21 against 20 within 1000 ms of CPU.
PROOF_HEURISTICS = False
_NO_HEURISTICS: dict[str, bool | float] = {
    "mip_heuristic_effort": 0.0,
    "mip_heuristic_run_feasibility_jump": False,
    "mip_heuristic_run_rins": False,
    "mip_heuristic_run_rens": False,
    "mip_heuristic_run_root_reduced_cost": False,
}
# HiGHS accepts a row within ``mip_feasibility_tolerance`` (1e-6 by default) of its bound,
# relative to the row's scale: on rows of millions of cents that is a cent or more, enough to
# round a discount's floor or a free-shipping threshold the wrong way. On carts whose merchants
# have both (16 lines, 10 merchants, 20 carts a scale, checked against the exact DP) HiGHS
# proved wrong optima on 2-4 of 20 carts once a merchant's rows reached ~1.5e7 cents, none at
# ~1.5e6 and ~4.6e6 (60 carts each) or below. The tolerance is therefore set so that the
# program's largest row (``MilpModel.money``) is held to ``_ROW_CENTS``: no wrong proof on the
# same carts up to ~1e8 cents (tolerances 1e-8 and 1e-9).
_ROW_CENTS = 0.1
_DEFAULT_FEASIBILITY = 1e-6
# The status of a run not started because of that limit.
MONEY_STATUS = "Amounts beyond HiGHS's exact range"
# One HiGHS solve at a time per process: a run abandoned at its deadline may still be winding
# down when the next starts, and two never share HiGHS's scheduler.
_HIGHS_LOCK = threading.Lock()


@dataclass(frozen=True, slots=True)
class MilpOutcome:
    """HiGHS's answer before it becomes a :class:`Solution`.

    ``choice``: merchant index per line (int64), or None when HiGHS found no feasible point in
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
    program built already (several runs on one cart share its build); ``bounds``: columns whose
    bounds this run changes (the warm start must respect them)."""
    started = time.perf_counter()
    deadline = None if time_limit_ms is None else started + time_limit_ms / 1e3
    job = _HighsJob(problem, started, deadline)
    job.relaxed = relaxed
    money = money_scale(problem) if model is None else model.money
    if not highs_trusted(money):
        return MilpOutcome(None, -math.inf, MONEY_STATUS, 0.0, 0.0, 0, 0)
    # The build is Python: it runs here, checking the deadline between merchants, so that it
    # never competes with this thread for the GIL. Only HiGHS (GIL released) runs on a worker.
    try:
        milp = (
            model if model is not None else milp_build(problem, cancelled=job.expired, money=money)
        )
        job.shape = (milp.n_cols, milp.n_rows)
        highs = _highs_for(
            milp,
            warm_start,
            threads,
            relaxed=relaxed,
            presolve=presolve,
            heuristics=heuristics,
            expires_within=job.expires_within,
            bounds=bounds,
        )
    except BuildCancelled:
        return job.cut_outcome()
    job.build_ms = (time.perf_counter() - started) * 1e3
    if deadline is None:
        with _HIGHS_LOCK:
            highs.run()
        return job.outcome(milp, highs)
    if job.expired():
        return job.cut_outcome()
    # Not a daemon: a process that exits while a cut run winds down waits for it (HiGHS calling
    # back into a finalising interpreter aborts the process).
    worker = threading.Thread(target=job.run, args=(highs,), name="milp-deadline")
    worker.start()
    try:
        finished = _await(job, job.left_s())
    except BaseException:
        job.cancel()
        raise
    if not finished:
        job.cancel()
    if job.error is not None:
        raise job.error
    if not job.done.is_set() or not job.ran:
        return job.cut_outcome()
    return job.outcome(milp, highs)  # finished, even if just as it was cancelled


def _await(job: _HighsJob, timeout_s: float) -> bool:
    """Wait for HiGHS until the deadline; True when it finished (tests replace this to stand
    for a deadline that passes while HiGHS runs)."""
    return job.done.wait(timeout_s)


class _HighsJob:
    """One cart's solve against its deadline: HiGHS on a worker thread, cancellable from the
    caller's thread at any point of its run (``cancelSolve`` trips its interrupt callbacks)."""

    def __init__(self, problem: CartProblem, started: float, deadline: float | None) -> None:
        self.problem = problem
        self.started = started
        self.deadline = deadline
        self.done = threading.Event()
        self._lock = threading.Lock()
        self._cancelled = False
        self.highs = None  # set once HiGHS is about to run
        self.ran = False
        self.error: BaseException | None = None
        self.build_ms: float | None = None
        self.shape = (0, 0)
        self.relaxed = False

    def expired(self) -> bool:
        return self.expires_within(0.0)

    def expires_within(self, ms: float) -> bool:
        return self.deadline is not None and time.perf_counter() + ms / 1e3 >= self.deadline

    def left_s(self) -> float:
        assert self.deadline is not None, "only runs with a deadline wait on a worker"
        return max(0.0, self.deadline - time.perf_counter())

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            if self.highs is not None:
                self.highs.cancelSolve()

    def run(self, highs) -> None:
        """The worker: wait for HiGHS to be free, hand it what is left, run it."""
        try:
            if not _HIGHS_LOCK.acquire(timeout=self.left_s()):
                return  # a straggler held HiGHS until the deadline: cut
            try:
                # HiGHS's own limit: what is left, less a margin for its late clock checks.
                limit_ms = self.left_s() * 1e3 * _LIMIT_SHARE - _LIMIT_MARGIN_MS
                with self._lock:
                    if self._cancelled or limit_ms < _MIN_HIGHS_MS:
                        return
                    self.highs = highs
                highs.setOptionValue("time_limit", limit_ms / 1e3)
                highs.run()
                self.ran = True
            finally:
                _HIGHS_LOCK.release()
        except BaseException as exc:  # re-raised in the caller, unless it already left
            self.error = exc
            logger.debug("HiGHS run failed", exc_info=True)
        finally:
            self.done.set()

    def cut_outcome(self) -> MilpOutcome:
        elapsed = (time.perf_counter() - self.started) * 1e3
        build = elapsed if self.build_ms is None else self.build_ms
        return MilpOutcome(
            choice=None,
            bound=-math.inf,
            status=CUT_STATUS,
            build_ms=build,
            solve_ms=elapsed - build,
            n_cols=self.shape[0],
            n_rows=self.shape[1],
            cut=True,
        )

    def outcome(self, milp: MilpModel, highs) -> MilpOutcome:
        assert self.build_ms is not None, "HiGHS answers only after the build"
        solve_ms = (time.perf_counter() - self.started) * 1e3 - self.build_ms
        info = highs.getInfo()
        choice = None
        values = None
        if self.relaxed:
            optimal = highs.getModelStatus() == highspy_status_optimal()
            bound = info.objective_function_value if optimal else -math.inf
            values = np.asarray(highs.getSolution().col_value) if optimal else None
        elif info.primal_solution_status == _SOLUTION_FEASIBLE:
            x = np.asarray(highs.getSolution().col_value[: milp.x_line.size])
            choice = choice_from_x(self.problem, milp, x)
        if not self.relaxed:
            bound = info.mip_dual_bound
        return MilpOutcome(
            choice=choice,
            bound=bound if math.isfinite(bound) else -math.inf,
            status=highs.modelStatusToString(highs.getModelStatus()),
            build_ms=self.build_ms,
            solve_ms=solve_ms,
            n_cols=milp.n_cols,
            n_rows=milp.n_rows,
            values=values,
        )


def highspy_status_optimal():
    import highspy

    return highspy.HighsModelStatus.kOptimal


def _highs_for(
    milp: MilpModel,
    warm_start,
    threads,
    *,
    relaxed=False,
    presolve=True,
    heuristics=True,
    expires_within: Callable[[float], bool] | None = None,
    bounds: ColumnBounds | None = None,
):
    """A HiGHS instance holding the program (and the warm start), ready to run and to be
    interrupted by ``cancelSolve``. The hand-off is part of the build (on a 10,000-line cart
    it is the larger part) and HiGHS's ``passModel`` cannot be interrupted: ``expires_within(ms)``
    (True when the deadline passes within ``ms``) is asked between the steps, with the
    hand-off's predicted time before it, and the run stops here (:class:`BuildCancelled`)
    rather than start a step it cannot finish in time."""
    import highspy

    def check(ahead_ms: float = 0.0) -> None:
        if expires_within is not None and expires_within(ahead_ms):
            raise BuildCancelled

    check(milp.model.nonzeros() * (_ARRAYS_MS_PER_NONZERO + _PASS_MS_PER_NONZERO))
    arrays = milp.model.arrays()
    check(arrays.index.size * _PASS_MS_PER_NONZERO)
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    highs.setOptionValue("mip_rel_gap", 0.0)
    highs.setOptionValue("mip_abs_gap", _ABS_GAP)
    highs.setOptionValue("mip_feasibility_tolerance", feasibility_tolerance(milp.money))
    if threads is not None:
        highs.setOptionValue("threads", int(threads))
    if not presolve:
        highs.setOptionValue("presolve", "off")
    if not heuristics:
        for option, value in _NO_HEURISTICS.items():
            highs.setOptionValue(option, value)
    # Registers the interrupt callbacks (simplex, IPM, MIP) that ``cancelSolve`` trips.
    highs.HandleUserInterrupt = True
    arrays.pass_to(highs, relaxed=relaxed)
    if bounds is not None and bounds.cols.size:
        highs.changeColsBounds(int(bounds.cols.size), bounds.cols, bounds.lower, bounds.upper)
    check()
    if warm_start is not None and not relaxed:
        values = milp_point(milp, warm_start)
        check()
        highs.setSolution(milp.n_cols, np.arange(milp.n_cols, dtype=np.int32), values)
    return highs


def feasibility_tolerance(money: float) -> float:
    """HiGHS's MIP feasibility tolerance for a program whose largest row holds ``money`` cents
    (see ``_ROW_CENTS``)."""
    return min(_DEFAULT_FEASIBILITY, _ROW_CENTS / max(money, 1.0))


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
    no feasible point is known (no warm start and no HiGHS incumbent in the time)."""
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
            f"HiGHS is exact to the cent only while a merchant's goods, threshold and shipping "
            f"stay within {HIGHS_MAX_MONEY:.0e} cents; the dp, full and ga algorithms take this "
            "cart",
        )
    if solution is None:
        raise BudgetError(
            "budget_ms", budget_ms, f"HiGHS found no assignment in time ({outcome.status})"
        )
    return solution


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
    choice = outcome.choice
    if warm_start is not None:
        warm = np.asarray(warm_start, dtype=np.int64)
        if choice is None or _cost(problem, warm) < _cost(problem, choice):
            choice = warm
    if choice is None:
        return None, outcome
    total = _cost(problem, choice)
    # HiGHS's bound is weak (even negative) early on; the GA's price-only bound never is.
    bound = max(outcome.bound, float(lower_bound(problem)))
    proven = milp_proves(total, bound)
    gap = None if proven or total == 0 else max(0.0, (total - bound) / total)
    solution = make_solution(
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
    return solution, outcome


def cents_bound(bound: float) -> int | None:
    """A floating-point dual bound as a proven bound in whole cents (None: no bound)."""
    if not math.isfinite(bound):
        return None
    return max(0, math.ceil(bound - _BOUND_SLACK))


def _cost(problem: CartProblem, choice: np.ndarray) -> int:
    return int(assignment_cost(choice, problem.quantity, problem.price, *problem.merchant_params))
