"""Executing a queued run: claim it, solve the cart as it is when the job runs, and store the
answer (or the reason it failed); safe to run any number of times for one run."""

import logging
import time

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.db.models import F
from django.utils import timezone

from smartcart.answers import answer_from_solution, solver_plan
from smartcart.models import OptimizationRun
from smartcart.selectors import cart_problem_build
from smartcart.services.common import (
    EXPECTED_FAILURES,
    Status,
    failure_message,
    finish_failed,
    ms_since,
    run_solve,
    run_write,
)
from smartcart.services.lease import lease_heartbeat, lease_renew
from storefront.errors import NotFound
from storefront.models import Cart

logger = logging.getLogger(__name__)


def _run_start(*, run_id: int) -> tuple[OptimizationRun, bool]:
    """Marks the run running and counts the attempt; ``(run, False)`` when it is finished
    already (a duplicate or redelivered message) or has used up its attempts.

    One conditional UPDATE claims the run (no lock held while solving); a redelivered
    message finds it ``running`` and runs it again, since its first worker died.
    """
    max_attempts = settings.SMARTCART_MAX_ATTEMPTS
    with run_write():
        claimed = OptimizationRun.objects.filter(
            pk=run_id, status__in=[Status.QUEUED, Status.RUNNING], attempts__lt=max_attempts
        ).update(status=Status.RUNNING, attempts=F("attempts") + 1, started_at=timezone.now())
    try:
        run = OptimizationRun.objects.get(pk=run_id)
    except OptimizationRun.DoesNotExist:
        raise NotFound(
            "No such optimization.", code="optimization_not_found", field="run_id"
        ) from None
    if claimed:
        assert run.started_at is not None  # the claiming UPDATE set it
        lease_renew(run=run)
        if run.attempts == 1:
            run.queue_wait_ms = (run.started_at - run.created_at).total_seconds() * 1000.0
        return run, True
    if not run.is_finished:
        finish_failed(
            run=run,
            message=f"Stopped after {run.attempts} attempts: each was interrupted (a lost "
            "worker or a database error). Please try again.",
        )
    return run, False


def _finish(*, run: OptimizationRun, fields: dict) -> OptimizationRun:
    """Writes the outcome only while the run is still running: a late duplicate, or a worker
    the reaper gave up on, cannot overwrite an outcome already recorded."""
    now = timezone.now()
    fields = {
        **fields,
        "finished_at": now,
        "elapsed_ms": (now - run.created_at).total_seconds() * 1000.0,
        "queue_wait_ms": run.queue_wait_ms,
    }
    with run_write():
        updated = OptimizationRun.objects.filter(pk=run.pk, status=Status.RUNNING).update(**fields)
    if not updated:
        logger.info("Run %s was finished elsewhere; this outcome is dropped", run.pk)
        run.refresh_from_db()
        return run
    for name, value in fields.items():
        setattr(run, name, value)
    return run


def optimization_run_execute(*, run_id: int, heartbeat: bool = False) -> OptimizationRun:
    """Solves a queued run and stores the answer; safe to call any number of times.

    The cart is read again here, so the answer is for the cart as it is when the job runs
    (``cart_version`` and ``current_total`` are updated to it). A cart that became empty or
    unbuyable meanwhile fails the run with the reason; so does a solver error. A database
    error (``OperationalError``, ``InterfaceError``) is raised instead: the run stays
    ``running`` and the task's autoretry runs it again (``SMARTCART_MAX_ATTEMPTS`` caps it).
    ``heartbeat``: renew the run's lease from a thread while solving (on a worker,
    ``smartcart.services.lease``).
    """
    run, started = _run_start(run_id=run_id)
    if not started:
        return run
    t0 = time.perf_counter()
    try:
        # Only the id is needed: no query for the cart row itself.
        build = cart_problem_build(cart=Cart(pk=run.cart_id), sold_out_allowed=True)
        build_ms = ms_since(t0)
        with lease_heartbeat(run=run, enabled=heartbeat):
            solution, solve_ms = run_solve(
                build=build,
                budget_ms=run.budget_ms,
                allow_gpu=run.route == OptimizationRun.Route.GPU,
            )
        routing = (run.plan or {}).get("routing")
        fields = answer_from_solution(
            build=build, solution=solution, plan=solver_plan(solution=solution, routing=routing)
        )
    except (OperationalError, InterfaceError):
        raise
    except Exception as error:
        if not isinstance(error, EXPECTED_FAILURES):
            logger.exception("Optimization run %s failed", run.pk)
        return finish_failed(run=run, message=failure_message(error))
    return _finish(
        run=run,
        fields={**fields, "status": Status.DONE, "build_ms": build_ms, "solve_ms": solve_ms},
    )
