"""Handing one task to Celery by its registered name: the only place that calls Celery."""

from collections.abc import Sequence
from typing import Any

from celery import current_app
from celery.app.task import Task


def task_by_name(name: str) -> Task:
    tasks = current_app.tasks
    if name not in tasks:
        # The task modules are imported by autodiscovery, which a process that never started a
        # worker (a shell, a script) may not have run yet.
        current_app.loader.import_default_modules()
    return tasks[name]


def tasks_run_in_process() -> bool:
    """Whether a sent task runs right here (eager: no broker, and the tests)."""
    return bool(current_app.conf.task_always_eager)


def task_send(
    name: str,
    /,
    *,
    args: Sequence[Any] | None = None,
    kwargs: dict[str, Any] | None = None,
    queue: str | None = None,
    countdown: float | None = None,
) -> None:
    """Sends the task now (run in-process when Celery is eager, its exceptions raised). Only
    the options given are passed on, so the task's own defaults (its queue) apply."""
    task = task_by_name(name)
    if queue is None and countdown is None:
        task.delay(*(args or ()), **(kwargs or {}))  # exactly what callers of .delay() did
        return
    given: dict[str, Any] = {"args": args, "kwargs": kwargs, "queue": queue, "countdown": countdown}
    task.apply_async(**{key: value for key, value in given.items() if value is not None})
