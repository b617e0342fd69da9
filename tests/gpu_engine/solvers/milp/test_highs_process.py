"""HiGHS in its own solver process: a crash or a hang there fails one run, never the caller."""

import os
import signal
import time

import numpy as np
import pytest

from gpu_engine import CartProblem
from gpu_engine.planning.carts import random_cart
from gpu_engine.solvers.milp import highs_process, runner


def _problem(lines: int = 100) -> CartProblem:
    return CartProblem.from_dict(random_cart(1, lines))


def _kill_child_once_running(monkeypatch, sig: int) -> list[int]:
    """Send ``sig`` to the solver process as soon as the next run is under way."""
    real_reply_for = highs_process._Child.reply_for
    killed: list[int] = []

    def reply_for(child, job, timeout_s, stop=None):
        if not killed:
            time.sleep(0.02)  # HiGHS is busy with the 100-line cart by now
            os.kill(child.proc.pid, sig)
            killed.append(child.proc.pid)
        return real_reply_for(child, job, timeout_s, stop)

    monkeypatch.setattr(highs_process._Child, "reply_for", reply_for)
    return killed


@pytest.mark.parametrize("budget_ms", [None, 30_000])
def test_a_crash_inside_highs_is_a_failed_run_and_the_next_run_gets_a_new_process(
    monkeypatch, budget_ms
):
    killed = _kill_child_once_running(monkeypatch, signal.SIGSEGV)
    problem = _problem()
    outcome = runner.milp_run(problem, time_limit_ms=budget_ms)
    assert outcome.status == runner.CRASH_STATUS and outcome.failed
    assert outcome.choice is None and not outcome.cut
    # The caller is alive, and so is HiGHS for the next cart, in a new process.
    small = CartProblem.from_dict(random_cart(4, 6, n_merchants=5, offers=(1, 3)))
    assert runner.solve_milp(small).optimal
    assert highs_process.service().child.proc.pid != killed[0]


def test_a_crash_with_a_warm_start_keeps_the_warm_start_unproven(monkeypatch):
    _kill_child_once_running(monkeypatch, signal.SIGKILL)
    problem = _problem()
    warm = problem.cand_merchant[:, 0].astype(np.int64)
    solution = runner.solve_milp(problem, budget_ms=30_000, warm_start=warm)
    assert solution.stats["highs_status"] == runner.CRASH_STATUS
    assert not solution.optimal


def test_a_crash_without_an_assignment_is_refused_with_its_reason(monkeypatch):
    _kill_child_once_running(monkeypatch, signal.SIGSEGV)
    with pytest.raises(RuntimeError, match="HiGHS failed on this cart \\(HiGHS crashed\\)"):
        runner.solve_milp(_problem(), budget_ms=30_000)


def _stop_child_at_the_deadline(monkeypatch) -> list:
    """The next run's deadline passes while HiGHS runs, and its process stops answering at that
    moment (SIGSTOP): its cancel is never acted on."""
    real_reply_for = highs_process._Child.reply_for
    stopped: list = []

    def reply_for(child, job, timeout_s, stop=None):
        if not stopped:
            time.sleep(0.02)
            os.kill(child.proc.pid, signal.SIGSTOP)
            stopped.append(child)
            return highs_process.CUT
        return real_reply_for(child, job, timeout_s, stop)

    monkeypatch.setattr(highs_process._Child, "reply_for", reply_for)
    return stopped


def test_a_process_that_ignores_its_cancel_is_replaced(monkeypatch):
    """A cut run whose process stops answering is killed once the grace after its cancel has
    passed, and the next run is answered by a new process."""
    monkeypatch.setattr(highs_process, "KILL_GRACE_S", 0.2)
    stopped = _stop_child_at_the_deadline(monkeypatch)
    assert runner.milp_run(_problem(), time_limit_ms=60_000).cut
    small = CartProblem.from_dict(random_cart(4, 6, n_merchants=5, offers=(1, 3)))
    assert runner.solve_milp(small, budget_ms=30_000).optimal
    assert highs_process.service().child is not stopped[0]
    assert stopped[0].proc.poll() is not None  # killed, not left stopped


def test_a_run_waits_for_a_cancelled_run_only_until_its_own_deadline(monkeypatch):
    monkeypatch.setattr(highs_process, "KILL_GRACE_S", 60.0)
    stopped = _stop_child_at_the_deadline(monkeypatch)
    assert runner.milp_run(_problem(), time_limit_ms=60_000).cut
    waits: list[float] = []
    stopped_reply_for = highs_process._Child.reply_for

    def recording(child, job, timeout_s, stop=None):
        waits.append(timeout_s)
        return stopped_reply_for(child, job, timeout_s, stop)

    monkeypatch.setattr(highs_process._Child, "reply_for", recording)
    try:
        outcome = runner.milp_run(_problem(30), time_limit_ms=50)
        # Each wait for the cancelled run's reply ends by this run's deadline, not the grace.
        assert outcome.cut and all(wait <= 0.05 for wait in waits)
        assert highs_process.service().child is stopped[0]
    finally:
        os.kill(stopped[0].proc.pid, signal.SIGCONT)


def test_a_forked_process_gets_its_own_solver_process():
    highs_process.start()
    parent_child = highs_process.service().child
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the forked side reports through its exit status
        ok = highs_process.service().child is None
        small = CartProblem.from_dict(random_cart(4, 6, n_merchants=5, offers=(1, 3)))
        ok = ok and runner.solve_milp(small).optimal
        ok = ok and highs_process.service().child is not parent_child
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    assert parent_child.alive() and highs_process.service().child is parent_child


def test_a_solver_process_that_cannot_start_fails_the_run_not_the_caller(monkeypatch):
    def no_processes_left(self):
        raise OSError(11, "Resource temporarily unavailable")

    highs_process.service().child = None
    monkeypatch.setattr(highs_process._Child, "__init__", no_processes_left)
    highs_process.start()  # logged, not raised: the warm-up goes on
    outcome = runner.milp_run(_problem(6), time_limit_ms=5_000)
    assert outcome.status == runner.CRASH_STATUS and outcome.failed
