"""What the improve-cart services share: the run row's write transaction, the solver call,
the budget check, recording a failure, and sending a queued run's job."""

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

from celery.exceptions import SoftTimeLimitExceeded
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import connection, transaction
from django.utils import timezone

from gpu_engine import ProblemError, Solution, solve
from smartcart.models import OptimizationRun
from smartcart.routing import rate_profile
from smartcart.selectors import CartProblemBuild
from storefront.enqueue import task_enqueue
from storefront.errors import Conflict, NotFound, ValidationFailed

logger = logging.getLogger(__name__)

Status = OptimizationRun.Status
MAX_BUDGET_MS = 60_000
# The worker's task (``smartcart.tasks``), sent by its registered name.
OPTIMIZATION_RUN_EXECUTE = "smartcart.optimization_run_execute"

User = AbstractBaseUser | AnonymousUser


def ms_since(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


@contextmanager
def run_write() -> Iterator[None]:
    """A transaction for writing a run row without waiting for the WAL flush (PostgreSQL's
    ``synchronous_commit = off``, for this transaction only).

    Runs are derived data that can be computed again: a database crash can lose at most the
    last fraction of a second of run writes (a run then looks queued, the reaper fails it,
    the shopper presses the button again), and never corrupts anything. Cart changes
    (``optimization_run_apply``) keep full durability. Saves an fsync per write: several
    milliseconds on a busy disk, on every improve-cart request.
    """
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL synchronous_commit TO OFF")
        yield


def run_solve(
    *, build: CartProblemBuild, budget_ms: int | None, allow_gpu: bool
) -> tuple[Solution, float]:
    """The planner picks the solver; ``allow_gpu`` only on the ``gpu`` queue's workers (a
    forked CPU worker or the web process must never open a CUDA context)."""
    start = time.perf_counter()
    solution = solve(
        build.problem, budget_ms=budget_ms, allow_gpu=allow_gpu, profile=rate_profile()
    )
    return solution, ms_since(start)


# --- budget and caller -----------------------------------------------------------------


def check_budget(budget_ms: object) -> int | None:
    if budget_ms is None:
        return None
    if isinstance(budget_ms, bool) or not isinstance(budget_ms, int) or budget_ms < 1:
        raise ValidationFailed(
            f"The budget must be a whole number of milliseconds >= 1, got {budget_ms!r}.",
            code="budget_invalid",
            field="budget_ms",
        )
    if budget_ms > MAX_BUDGET_MS:
        raise ValidationFailed(
            f"The budget must be at most {MAX_BUDGET_MS} ms, got {budget_ms}.",
            code="budget_too_large",
            field="budget_ms",
        )
    return budget_ms


def signed_in(user: User | None) -> AbstractBaseUser | None:
    return user if user is not None and user.is_authenticated else None


# --- failures and sending a job ------------------------------------------------------------


EXPECTED_FAILURES = (ValidationFailed, Conflict, NotFound, ProblemError, SoftTimeLimitExceeded)


def failure_message(error: BaseException) -> str:
    if isinstance(error, SoftTimeLimitExceeded):
        return "Stopped: the optimizer ran out of time. Please try again."
    if isinstance(error, ValidationFailed | Conflict | NotFound):
        return error.message
    if isinstance(error, ProblemError):
        return f"The cart could not be optimised: {error}"
    return f"The optimiser failed ({type(error).__name__}). Please try again."


def finish_failed(*, run: OptimizationRun, message: str) -> OptimizationRun:
    now = timezone.now()
    with run_write():
        OptimizationRun.objects.filter(
            pk=run.pk, status__in=[Status.QUEUED, Status.RUNNING]
        ).update(
            status=Status.FAILED,
            error=message,
            finished_at=now,
            elapsed_ms=(now - run.created_at).total_seconds() * 1000.0,
            queue_wait_ms=run.queue_wait_ms,
        )
    run.refresh_from_db()
    return run


def optimization_run_fail(*, run_id: int, reason: str) -> OptimizationRun | None:
    """Marks an unfinished run failed (a task out of time or out of retries)."""
    run = OptimizationRun.objects.filter(pk=run_id).first()
    return None if run is None else finish_failed(run=run, message=reason)


def tasks_run_in_process() -> bool:
    """No broker: a task sent now runs in this process before the call returns."""
    from storefront.config.celery import app

    return bool(app.conf.task_always_eager)


def optimization_run_enqueue(*, run: OptimizationRun) -> None:
    """Sends the run's job to its queue (``run.route``). Called on commit, never before, so
    the worker always finds the row."""
    try:
        task_enqueue(
            OPTIMIZATION_RUN_EXECUTE,
            kwargs={"run_id": run.pk},
            queue=str(run.route),
            durable=False,
        )
    except Exception:
        # The broker is down (or, in-process, the job itself raised a database error after
        # its retries): fail the run now rather than leave it queued with no message, which
        # would block the button until the reaper came by.
        logger.exception("Could not start optimization run %s", run.pk)
        run.enqueue_failed = True
        optimization_run_fail(
            run_id=run.pk, reason="The optimizer could not be started. Please try again."
        )
