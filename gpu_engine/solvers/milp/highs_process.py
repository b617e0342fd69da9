"""HiGHS in a solver process of its own: a crash inside HiGHS fails one run, never the caller.

HiGHS is C++ and can die on a numerically hard program (a SIGSEGV would take the whole web or
worker process down). Every HiGHS run of the engine goes to a long-lived child
process (:mod:`gpu_engine.solvers.milp.highs_child`), one run at a time per lane (lane 0 for
every run; a portfolio runs its second formulation in lane 1, :mod:`.portfolio`):

* a run that ends in time answers with HiGHS's status, bounds and column values;
* a run still going at its deadline is cancelled (HiGHS stops at its next interrupt check) and
  the caller gets :data:`CUT` at once; the next run waits for that answer, and a child that has
  not answered within :data:`KILL_GRACE_S` of the cancel is killed and replaced;
* a child that dies answers :data:`CRASHED`, and a new one is started for the next run.

The child is started before a budget's clock (:func:`start`, called by the warm-up) and again
right after a crash, so a run rarely waits for Python to start. A forked process (a Celery
prefork worker) starts its own child: it never shares its parent's pipes.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpu_engine.solvers.milp import highs_child

logger = logging.getLogger(__name__)

# A cancelled run that has not answered after this long is killed: HiGHS checks its interrupt
# between steps, and one step of a large program (a presolve, an LP solve) can take a while.
KILL_GRACE_S = 2.0
# How often a run that another thread may stop looks at its ``stop`` event (s).
_STOP_POLL_S = 0.01
# How long a run may wait for a new child to start (Python, NumPy and highspy: ~0.1 s here).
START_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Failure:
    """Why a run gave no HiGHS answer: ``kind`` is "cut" (its deadline passed) or "crashed"."""

    kind: str
    detail: str = ""


CUT = Failure("cut")
CRASHED = Failure("crashed")


class _Child:
    """One solver process and the thread that reads its replies into a queue."""

    def __init__(self) -> None:
        script = Path(highs_child.__file__)
        self.proc = subprocess.Popen(
            # -P: the script's folder stays off sys.path; PYTHONPATH and site-packages are
            # kept (a deployment may install highspy anywhere the caller finds it).
            [sys.executable, "-P", str(script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            close_fds=True,
        )
        self.replies: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.pending: int | None = None  # a cancelled run whose reply is still to come
        self.cancelled_at = 0.0
        threading.Thread(target=self._read, name="highs-replies", daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None, "started with a pipe"
        try:
            while True:
                self.replies.put(highs_child.receive(self.proc.stdout))
        except (EOFError, OSError, ValueError):
            self.replies.put(None)  # the child died (or was killed)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, message: dict[str, Any]) -> bool:
        assert self.proc.stdin is not None, "started with a pipe"
        try:
            highs_child.send(self.proc.stdin, message)
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False

    def reply_for(
        self, job: int, timeout_s: float | None, stop: threading.Event | None = None
    ) -> dict[str, Any] | Failure:
        """The reply to ``job`` (older replies are dropped), CUT when ``timeout_s`` passes or
        ``stop`` is set first, CRASHED when the child dies."""
        end = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            left = None if end is None else max(0.0, end - time.monotonic())
            if stop is not None:
                if stop.is_set():
                    return CUT
                left = _STOP_POLL_S if left is None else min(left, _STOP_POLL_S)
            try:
                reply = self.replies.get(timeout=left)
            except queue.Empty:
                if end is not None and time.monotonic() >= end:
                    return CUT
                continue
            if reply is None:
                self.replies.put(None)  # stays dead for every later wait
                return Failure("crashed", _exit_detail(self.proc))
            if reply["id"] == job:
                return reply
            if reply["id"] == self.pending:
                self.pending = None

    def kill(self) -> None:
        try:
            self.proc.kill()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):  # pragma: no cover - already gone
            pass
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def _exit_detail(proc: subprocess.Popen) -> str:
    try:
        code = proc.wait(timeout=1)
    except subprocess.TimeoutExpired:
        return "the solver process stopped answering"
    if code < 0:
        return f"the solver process died of signal {-code}"
    return f"the solver process exited with status {code}"


class _Service:
    """This process's solver child: one run at a time, replaced when it dies or hangs."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.child: _Child | None = None
        self.ids = itertools.count(1)
        self.pid = os.getpid()
        self.crashes = 0

    def start(self) -> None:
        """Start the child if there is none (before a budget's clock starts). A child that
        cannot start (no processes or descriptors left) is logged; the next run tries again."""
        with self.lock:
            try:
                self._ensure()
            except OSError:
                logger.exception("HiGHS's solver process could not start")

    def _ensure(self) -> _Child:
        child = self.child
        if child is None or not child.alive():
            if child is not None:
                child.kill()
            child = self.child = _Child()
        return child

    def run(
        self,
        request: dict[str, Any],
        deadline: float | None,
        stop: threading.Event | None = None,
    ) -> dict[str, Any] | Failure:
        """Send ``request`` (its ``id`` is set here) and wait for its reply until ``deadline``
        (a ``time.perf_counter()`` instant; None: no deadline) or until ``stop`` is set (by
        another thread: a portfolio's other lane proved the cart)."""
        if not self.lock.acquire(timeout=_left(deadline) if deadline is not None else -1):
            return CUT
        try:
            try:
                child = self._ready_child(deadline)
            except OSError as exc:  # no process could start: this run fails, the caller lives
                logger.error("HiGHS's solver process could not start: %s", exc)
                return Failure("crashed", f"the solver process could not start ({exc})")
            if child is None:
                return CUT
            job = next(self.ids)
            if not child.send({**request, "id": job}):
                return self._crashed(child, Failure("crashed", _exit_detail(child.proc)))
            reply = child.reply_for(job, None if deadline is None else _left(deadline), stop)
            if reply is CUT:
                child.send({"kind": "cancel", "id": job})
                child.pending, child.cancelled_at = job, time.monotonic()
            elif isinstance(reply, Failure):
                return self._crashed(child, reply)
            return reply
        finally:
            self.lock.release()

    def _ready_child(self, deadline: float | None) -> _Child | None:
        """A child with no run in progress, or None when the deadline passes first: a cancelled
        run is waited for, and its child killed and replaced past :data:`KILL_GRACE_S`."""
        child = self._ensure()
        if child.pending is None:
            return child
        kill_at = child.cancelled_at + KILL_GRACE_S
        wait = kill_at - time.monotonic()
        if deadline is not None:
            wait = min(wait, _left(deadline))
        reply = child.reply_for(child.pending, max(0.0, wait))
        if not isinstance(reply, Failure):
            child.pending = None
            return child
        if reply is CUT and time.monotonic() < kill_at:
            return None  # our deadline came first; the cancelled run may still answer
        logger.warning("HiGHS did not stop within %.1f s of its cancel: replacing it", KILL_GRACE_S)
        child.kill()
        self.child = None
        return self._ensure()

    def _crashed(self, child: _Child, failure: Failure) -> Failure:
        self.crashes += 1
        logger.error("HiGHS's solver process failed (%s); starting a new one", failure.detail)
        child.kill()
        self.child = None
        # The next run should not pay for the start: begin it now, off this thread.
        threading.Thread(target=self.start, name="highs-restart", daemon=True).start()
        return failure


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.perf_counter())


_services: dict[int, _Service] = {}
_service_lock = threading.Lock()
# A forked process's copies of its parent's child and pipes: kept, so that their file objects
# never close a descriptor number that has since been reused.
_inherited: list[_Service] = []


def _forget_after_fork() -> None:
    """In a forked child: let go of the parent's solver processes without touching them
    (closing our copies of their pipes, so that they still see their parent leave)."""
    global _service_lock
    _service_lock = threading.Lock()  # it may have been held by another thread at the fork
    for service_ in _services.values():
        if service_.child is None:
            continue
        _inherited.append(service_)
        for stream in (service_.child.proc.stdin, service_.child.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError, ValueError):
                    os.close(stream.fileno())
    _services.clear()


os.register_at_fork(after_in_child=_forget_after_fork)


def service(lane: int = 0) -> _Service:
    """This process's solver service for ``lane`` (a portfolio runs two formulations side by
    side, one lane each; a forked process gets new ones)."""
    with _service_lock:
        current = _services.get(lane)
        if current is None or current.pid != os.getpid():
            current = _services[lane] = _Service()
        return current


def start(lane: int = 0) -> None:
    """Start this process's HiGHS child of ``lane`` now (the warm-up starts lane 0 before any
    budget; a portfolio's second lane starts on its first use)."""
    service(lane).start()


def run(
    request: dict[str, Any],
    deadline: float | None,
    *,
    lane: int = 0,
    stop: threading.Event | None = None,
) -> dict[str, Any] | Failure:
    """Run one request in this process's HiGHS child of ``lane`` (see :class:`_Service.run`)."""
    return service(lane).run(request, deadline, stop)
