"""A small pool of long-lived worker processes (:mod:`gpu_engine.fuzz.worker`) that survives
them: a worker that dies mid-task (a signal, an abort, an exit) is a ``crash`` of that task, one
that overruns the task's timeout is killed and its task is a ``hang``; either way a fresh worker
takes its place and the run goes on.

Workers are plain subprocesses speaking JSON lines (no fork of this process, so no inherited
locks or CUDA state); each solves many tasks, so the engine's warm-up is paid once per worker.
Each gets one numba thread by default: the pool, not the solver, uses the cores.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

READY_TIMEOUT_S = 600.0  # a cold numba cache compiles every kernel first
LOG_TAIL = 1500
MAX_START_FAILURES = 3


class SupervisorError(RuntimeError):
    """The pool cannot run at all (workers die before they are ready)."""


@dataclass
class Task:
    """One message for a worker: ``kind`` "solve" (``route`` at ``budget_ms``) or
    "reference" (the brute force)."""

    cart_key: str
    kind: str
    cart_text: str
    route: str = ""
    budget_ms: float | None = None
    seed: int = 0
    timeout_s: float = 60.0
    id: int = -1

    def message(self) -> str:
        body = {
            "id": self.id,
            "kind": self.kind,
            "cart": self.cart_text,
            "route": self.route,
            "budget_ms": self.budget_ms,
            "seed": self.seed,
        }
        return json.dumps(body) + "\n"


@dataclass
class Outcome:
    """What became of a task: ``status`` is the worker's (ok, refused, traceback) or the
    supervisor's (crash, hang); ``data`` the worker's answer or the crash's facts."""

    task: Task
    status: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Worker:
    proc: subprocess.Popen
    log_path: Path
    buffer: bytes = b""
    ready: bool = False
    started: float = 0.0
    task: Task | None = None
    deadline: float = 0.0
    log_offset: int = 0


class Pool:
    """``workers`` worker processes; :meth:`run` feeds them tasks and yields outcomes."""

    def __init__(
        self, workers: int = 2, *, env: dict[str, str] | None = None, threads: int = 1
    ) -> None:
        self.size = max(1, workers)
        self.env = dict(os.environ if env is None else env)
        self.env.setdefault("NUMBA_NUM_THREADS", str(threads))
        self.env.setdefault("OMP_NUM_THREADS", str(threads))
        self._dir = tempfile.TemporaryDirectory(prefix="gpu_engine_fuzz_")
        self._spawned = 0
        self._start_failures = 0
        self.restarts = 0

    # --- lifecycle ---

    def _spawn(self) -> _Worker:
        self._spawned += 1
        log_path = Path(self._dir.name) / f"worker-{self._spawned}.log"
        with open(log_path, "ab") as log:  # O_APPEND: our reads never move its writes
            proc = subprocess.Popen(
                [sys.executable, "-m", "gpu_engine.fuzz.worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                env=self.env,
            )
        return _Worker(proc=proc, log_path=log_path, started=time.monotonic())

    def _stop(self, worker: _Worker) -> None:
        if worker.proc.poll() is None:
            worker.proc.kill()
        worker.proc.wait()
        for stream in (worker.proc.stdin, worker.proc.stdout):
            if stream is not None:
                stream.close()

    def close(self) -> None:
        self._dir.cleanup()

    # --- the loop ---

    def run(self, tasks: Iterator[Task]) -> Iterator[Outcome]:
        """Outcomes of ``tasks`` (pulled lazily, so the caller may add more as it reads
        outcomes), in completion order."""
        workers = [self._spawn() for _ in range(self.size)]
        queue: deque[Task] = deque()
        selector = selectors.DefaultSelector()
        for w in workers:
            selector.register(w.proc.stdout, selectors.EVENT_READ, w)  # type: ignore[arg-type]
        next_id = 0
        exhausted = False
        try:
            while True:
                for w in workers:
                    if not (w.ready and w.task is None):
                        continue
                    if not queue and not exhausted:
                        task = next(tasks, None)
                        if task is None:
                            exhausted = True
                        else:
                            queue.append(task)
                    if queue:
                        task = queue.popleft()
                        task.id, next_id = next_id, next_id + 1
                        if not self._send(w, task):
                            queue.appendleft(task)
                            self._replace(workers, w, selector)
                if exhausted and not queue and all(w.task is None for w in workers):
                    return
                yield from self._wait(workers, selector)
        finally:
            for w in workers:
                self._stop(w)
            selector.close()

    def _send(self, worker: _Worker, task: Task) -> bool:
        assert worker.proc.stdin is not None
        worker.log_offset = worker.log_path.stat().st_size
        try:
            worker.proc.stdin.write(task.message().encode())
            worker.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return False  # it died idle: the task goes to its successor
        worker.task = task
        worker.deadline = time.monotonic() + task.timeout_s
        return True

    def _wait(self, workers: list[_Worker], selector: selectors.BaseSelector) -> Iterator[Outcome]:
        now = time.monotonic()
        deadlines = [
            w.deadline if w.ready else w.started + READY_TIMEOUT_S
            for w in workers
            if w.task is not None or not w.ready
        ]
        timeout = max(0.0, min(deadlines) - now) if deadlines else None
        for key, _ in selector.select(timeout):
            worker: _Worker = key.data
            yield from self._read(workers, worker, selector)
        now = time.monotonic()
        for w in list(workers):
            if w.task is not None and now >= w.deadline:
                task = w.task
                self._replace(workers, w, selector)
                yield Outcome(task, "hang", {"timeout_s": task.timeout_s})
            elif not w.ready and now >= w.started + READY_TIMEOUT_S:
                self._start_failed(workers, w, selector, "was not ready in time")

    def _read(
        self, workers: list[_Worker], worker: _Worker, selector: selectors.BaseSelector
    ) -> Iterator[Outcome]:
        assert worker.proc.stdout is not None
        data = os.read(worker.proc.stdout.fileno(), 1 << 16)
        if not data:
            yield from self._died(workers, worker, selector)
            return
        worker.buffer += data
        while b"\n" in worker.buffer:
            line, worker.buffer = worker.buffer.split(b"\n", 1)
            try:
                reply = json.loads(line)
            except ValueError:
                task = worker.task
                self._replace(workers, worker, selector)
                if task is not None:
                    yield Outcome(task, "crash", {"error": f"garbled reply {line[:200]!r}"})
                return
            if reply.get("ready"):
                worker.ready = True
                self._start_failures = 0
                continue
            task = worker.task
            assert task is not None and reply.get("id") == task.id, "a reply for another task"
            worker.task = None
            yield Outcome(task, reply.pop("status"), reply)

    def _died(
        self, workers: list[_Worker], worker: _Worker, selector: selectors.BaseSelector
    ) -> Iterator[Outcome]:
        code = worker.proc.wait()
        if not worker.ready:
            self._start_failed(workers, worker, selector, f"exited {code} before it was ready")
            return
        task = worker.task
        tail = self._log_tail(worker)
        self._replace(workers, worker, selector)
        if task is not None:
            yield Outcome(task, "crash", {"error": describe_exit(code), "log": tail})

    def _start_failed(
        self, workers: list[_Worker], worker: _Worker, selector: selectors.BaseSelector, why: str
    ) -> None:
        tail = self._log_tail(worker)
        self._start_failures += 1
        if self._start_failures >= MAX_START_FAILURES:
            raise SupervisorError(f"worker {why}; its log ends:\n{tail}")
        self._replace(workers, worker, selector)

    def _replace(
        self, workers: list[_Worker], worker: _Worker, selector: selectors.BaseSelector
    ) -> None:
        selector.unregister(worker.proc.stdout)  # type: ignore[arg-type]
        self._stop(worker)
        fresh = self._spawn()
        self.restarts += 1
        workers[workers.index(worker)] = fresh
        selector.register(fresh.proc.stdout, selectors.EVENT_READ, fresh)  # type: ignore[arg-type]

    def _log_tail(self, worker: _Worker) -> str:
        try:
            with open(worker.log_path, "rb") as log:
                log.seek(worker.log_offset)
                text = log.read().decode("utf-8", "replace")
        except OSError:
            return ""
        # faulthandler ends its report with every extension module loaded: noise here.
        text = text.split("\n\nExtension modules:", 1)[0]
        return text[-LOG_TAIL:]


def describe_exit(code: int) -> str:
    """``killed by SIGSEGV`` for a negative return code, else ``exited with N``."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with {code}"


def run_tasks(
    tasks: Iterator[Task], *, workers: int = 2, on_outcome: Callable[[Outcome], None]
) -> int:
    """Run ``tasks`` on a fresh pool, handing each outcome to ``on_outcome``; returns the
    number of workers started to replace dead or hung ones."""
    pool = Pool(workers)
    try:
        for outcome in pool.run(tasks):
            on_outcome(outcome)
    finally:
        pool.close()
    return pool.restarts
