"""The reaper: fails the runs a lost worker left behind (celery beat, and each Improve-cart
click for its own cart)."""

import logging
from datetime import datetime

from django.conf import settings
from django.db.models import Case, QuerySet, Value, When
from django.utils import timezone

from smartcart.models import OptimizationRun
from smartcart.selectors import optimization_run_stale_q
from smartcart.services.common import Status
from smartcart.services.lease import (
    lapsed_runs_recover,
    optimization_run_deadline,
    optimization_run_lease_check,
)

logger = logging.getLogger(__name__)


def stale_runs_fail(runs: QuerySet[OptimizationRun], *, now: datetime) -> int:
    limit_s = settings.CELERY_TASK_TIME_LIMIT
    queued_max_s = settings.SMARTCART_QUEUED_MAX_S
    return runs.filter(optimization_run_stale_q(now=now)).update(
        status=Status.FAILED,
        finished_at=now,
        error=Case(
            When(
                status=Status.RUNNING,
                then=Value(
                    f"Stopped: still running after the {limit_s} s time limit "
                    "(the worker was lost or killed). Please try again."
                ),
            ),
            default=Value(UNCLAIMED_ERROR.format(seconds=queued_max_s)),
        ),
    )


UNCLAIMED_ERROR = (
    "No optimiser started on your cart within {seconds} s: the optimisation workers are busy "
    "or not running. Your cart is unchanged. Please try again in a moment."
)


def optimization_run_poll_check(
    *, run: OptimizationRun, now: datetime | None = None
) -> OptimizationRun:
    """``run`` as a poll should show it: recovered if its lease lapsed, failed with the reason
    if it is still queued past its pickup deadline (so the page and the API learn why instead
    of waiting for beat). No query while neither applies."""
    now = now or timezone.now()
    run = optimization_run_lease_check(run=run, now=now)
    if run.status == Status.QUEUED and optimization_run_deadline(run=run) < now:
        if stale_runs_fail(OptimizationRun.objects.filter(pk=run.pk), now=now):
            logger.warning("Failed optimization run %s: no worker started it", run.pk)
        run.refresh_from_db()
    return run


def optimization_runs_reap(*, now: datetime | None = None) -> int:
    """Fails runs a lost worker left behind; returns how many.

    A run ``running`` for longer than the task's hard time limit (plus
    ``SMARTCART_REAPER_GRACE_S``) cannot still be alive: Celery killed it or its worker died
    without redelivery. A run ``queued`` past its pickup deadline (``SMARTCART_QUEUED_MAX_S``)
    has no worker serving its queue, or lost its message.
    Celery beat runs this every minute; ``optimization_run_create`` also reaps the cart it
    is asked about, so Improve cart never depends on beat running.
    """
    now = now or timezone.now()
    lapsed_runs_recover(runs=OptimizationRun.objects.all(), now=now)
    reaped = stale_runs_fail(OptimizationRun.objects.all(), now=now)
    if reaped:
        logger.warning("Reaped %s stuck optimization runs", reaped)
    return reaped
