"""The one way services hand work to Celery: by task name, after the transaction commits.

Services never import task modules (tasks import services, never the other way round), so a
task is named by its registered ``name=``. The task is looked up in the Celery app's registry
and sent with ``apply_async``, which honours ``CELERY_TASK_ALWAYS_EAGER`` (the no-Redis
default and the tests) exactly as ``.delay()`` does. This module is the seam that a
transactional outbox replaces later: callers keep calling the same two functions.
"""

from collections.abc import Sequence
from typing import Any

from celery import current_app
from celery.app.task import Task
from django.db import transaction

__all__ = ["task_enqueue", "task_enqueue_on_commit", "tasks_run_in_process"]


def _task(name: str) -> Task:
    tasks = current_app.tasks
    if name not in tasks:
        # The task modules are imported by autodiscovery, which a process that never started a
        # worker (a shell, a script) may not have run yet.
        current_app.loader.import_default_modules()
    return tasks[name]


def tasks_run_in_process() -> bool:
    """Whether a sent task runs right here (eager: no broker, and the tests)."""
    return bool(current_app.conf.task_always_eager)


def task_enqueue(
    name: str,
    /,
    *,
    args: Sequence[Any] | None = None,
    kwargs: dict[str, Any] | None = None,
    queue: str | None = None,
    countdown: float | None = None,
) -> None:
    """Sends the task now (eagerly run in-process when Celery is eager). Only the options
    given are passed on, so the task's own defaults (its queue, no countdown) apply."""
    task = _task(name)
    if queue is None and countdown is None:
        task.delay(*(args or ()), **(kwargs or {}))  # exactly what callers of .delay() did
        return
    given: dict[str, Any] = {"args": args, "kwargs": kwargs, "queue": queue, "countdown": countdown}
    task.apply_async(**{key: value for key, value in given.items() if value is not None})


def task_enqueue_on_commit(
    name: str,
    /,
    *,
    args: Sequence[Any] | None = None,
    kwargs: dict[str, Any] | None = None,
    queue: str | None = None,
    countdown: float | None = None,
    using: str | None = None,
) -> None:
    """Sends the task once the current transaction commits (at once outside one), so a worker
    never sees rows that are not there yet, and a rolled-back write sends nothing."""
    transaction.on_commit(
        lambda: task_enqueue(name, args=args, kwargs=kwargs, queue=queue, countdown=countdown),
        using=using,
    )
