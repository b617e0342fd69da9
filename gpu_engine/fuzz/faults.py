"""Fault routes: the failures the supervisor must survive and count, on demand.

Never part of a default run; name them (``--routes dp,fault-segv``) to check that a crash, a
traceback, a hang or a lie is counted against its route while the run goes on. The tests of
:mod:`gpu_engine.fuzz.supervisor` use them.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import time

from gpu_engine.problem import CapacityError, CartProblem
from gpu_engine.solution import Solution


def _segv(problem: CartProblem, budget_ms: float | None, seed: int) -> Solution:
    os.kill(os.getpid(), signal.SIGSEGV)
    raise AssertionError("unreachable: SIGSEGV ends the process")


def _abort(problem: CartProblem, budget_ms: float | None, seed: int) -> Solution:
    os.abort()


def _exit(problem: CartProblem, budget_ms: float | None, seed: int) -> Solution:
    os._exit(3)


def _raise(problem: CartProblem, budget_ms: float | None, seed: int) -> Solution:
    raise RuntimeError("injected fault")


def _refuse(problem: CartProblem, budget_ms: float | None, seed: int) -> Solution:
    raise CapacityError("items", problem.n_items, "injected refusal")


def _hang(problem: CartProblem, budget_ms: float | None, seed: int) -> Solution:
    time.sleep(3600)
    raise AssertionError("unreachable: the supervisor kills a hung worker")


def _lie(problem: CartProblem, budget_ms: float | None, seed: int) -> Solution:
    """The optimum less a cent, claimed proven: below the optimum and not what it prices at."""
    from gpu_engine.entry import solve

    # dp prices version 1 carts only; the full search takes the fuzz's version 2 ones.
    honest = solve(problem, algorithm="dp" if problem.simple else "cpu-full")
    return dataclasses.replace(honest, total=honest.total - 1, optimal=True)


def _overclaim(problem: CartProblem, budget_ms: float | None, seed: int) -> Solution:
    """Every line at its cheapest offer, honestly priced, claimed proven (a wrong proof
    wherever that is not the optimum)."""
    from gpu_engine.pricing import assignment_cost, total_of
    from gpu_engine.results import make_solution

    choice = problem.cand_merchant[:, 0].astype("int64")
    if problem.simple:
        total = int(
            assignment_cost(choice, problem.quantity, problem.price, *problem.merchant_params)
        )
    else:
        total = total_of(problem, choice)
    return make_solution(
        problem, choice, total=total, optimal=True, algorithm="fault", device="cpu", elapsed_ms=0.0
    )


FAULTS = {
    "fault-segv": _segv,
    "fault-abort": _abort,
    "fault-exit": _exit,
    "fault-raise": _raise,
    "fault-refuse": _refuse,
    "fault-hang": _hang,
    "fault-lie": _lie,
    "fault-overclaim": _overclaim,
}
