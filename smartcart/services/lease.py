"""Leases on running optimisation runs: a worker that dies mid-run is noticed in seconds.

A worker claiming a run sets ``lease_expires_at``; while it solves, a heartbeat thread renews
the lease every ``SMARTCART_HEARTBEAT_S``. A killed worker (SIGKILL, OOM, a lost machine)
stops renewing, and once the lease lapses the run is recovered: put back on its queue once
(the second attempt), or failed with the reason. Recovery happens wherever a lapse is first
seen: celery beat's reaper (every ``SMARTCART_REAP_EVERY_S``), the page's or the API's next
poll of that run, and the next Improve-cart click on the cart. Each check is one indexed
query over running runs (``optrun_lease_idx``) or a look at the row already loaded.

The engine's Numba kernels hold the GIL, so the heartbeat thread cannot renew during one long
kernel call: a lease therefore never lapses before the run's own budget has passed
(``started_at + budget + SMARTCART_LEASE_S``). With the defaults (lease 10 s, heartbeat 2 s,
beat every 5 s) a worker killed at the start of a default 2 s run is noticed within about
17 s, or at the next poll after 12 s.

Without a lease a dead worker's run was only noticed after the broker's visibility timeout
(3,900 s) or the reaper's task time limit (150 s).
"""

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from smartcart.models import OptimizationRun
from smartcart.services.common import optimization_run_enqueue

logger = logging.getLogger(__name__)

Status = OptimizationRun.Status
# Attempts after which a lapsed run is failed instead of queued again: the first try plus
# one retry.
LEASE_MAX_ATTEMPTS = 2


def lease_expiry(*, started_at: datetime, budget_ms: int | None, now: datetime) -> datetime:
    """When a lease granted or renewed ``now`` lapses: ``SMARTCART_LEASE_S`` from now, and never
    before the run's budget is spent (the heartbeat may not run during a kernel call)."""
    lease = timedelta(seconds=settings.SMARTCART_LEASE_S)
    budget = timedelta(milliseconds=budget_ms or settings.SMARTCART_DEFAULT_BUDGET_MS)
    return max(now + lease, started_at + budget + lease)


def lease_renew(*, run: OptimizationRun) -> bool:
    """Extends the lease of ``run`` while it is still running; False once it is not."""
    now = timezone.now()
    expires = lease_expiry(started_at=run.started_at or now, budget_ms=run.budget_ms, now=now)
    return bool(
        OptimizationRun.objects.filter(pk=run.pk, status=Status.RUNNING).update(
            lease_expires_at=expires
        )
    )


@contextmanager
def lease_heartbeat(*, run: OptimizationRun, enabled: bool = True) -> Iterator[None]:
    """Renews ``run``'s lease from a background thread until the block ends. The thread has
    its own database connection, closed when it stops."""
    if not enabled:
        yield
        return
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(settings.SMARTCART_HEARTBEAT_S):
                close_old_connections()
                if not lease_renew(run=run):
                    return
        except Exception:  # a missed renewal only shortens the lease; never kill the solve
            logger.exception("Lease heartbeat of run %s failed", run.pk)
        finally:
            connection.close()

    thread = threading.Thread(target=beat, name=f"optrun-{run.pk}-lease", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)


def lapsed_q(*, now: datetime) -> Q:
    return Q(status=Status.RUNNING, lease_expires_at__lt=now)


def lease_lapsed(*, run: OptimizationRun, now: datetime | None = None) -> bool:
    """The loaded row says its worker stopped renewing (no query)."""
    return (
        run.status == Status.RUNNING
        and run.lease_expires_at is not None
        and run.lease_expires_at < (now or timezone.now())
    )


def lapsed_runs_recover(*, runs: QuerySet[OptimizationRun], now: datetime | None = None) -> int:
    """Queues each lapsed run of ``runs`` once more, or fails it when it has had its retry;
    returns how many were recovered. Each update is conditional on the lapse, so two
    processes seeing the same lapse recover the run once."""
    now = now or timezone.now()
    recovered = 0
    for run in runs.filter(lapsed_q(now=now)).only("pk", "attempts", "route", "budget_ms"):
        recovered += _recover(run=run, now=now)
    if recovered:
        logger.warning("Recovered %s optimization runs whose worker stopped renewing", recovered)
    return recovered


def _recover(*, run: OptimizationRun, now: datetime) -> int:
    lapsed = OptimizationRun.objects.filter(pk=run.pk).filter(lapsed_q(now=now))
    if run.attempts < LEASE_MAX_ATTEMPTS:
        with transaction.atomic():
            # A queued run's lease is its deadline to be picked up (for the polling page).
            updated = lapsed.update(
                status=Status.QUEUED, lease_expires_at=_queued_deadline(run, now)
            )
            if updated:
                transaction.on_commit(lambda: optimization_run_enqueue(run=run))
        return updated
    return lapsed.update(
        status=Status.FAILED,
        lease_expires_at=None,
        finished_at=now,
        error=f"Stopped: the worker stopped responding (its lease lapsed) on attempt "
        f"{run.attempts}. Please try again.",
    )


def _queued_deadline(run: OptimizationRun, since: datetime) -> datetime:
    return since + timedelta(seconds=settings.SMARTCART_QUEUED_MAX_S)


def optimization_run_deadline(*, run: OptimizationRun) -> datetime:
    """When a page polling ``run`` should stop waiting: its lease (running: the next poll
    after it lapses recovers the run; queued again after a lapse: its new pickup deadline),
    else ``SMARTCART_QUEUED_MAX_S`` from its creation, when the next poll fails a run no worker
    started (``optimization_run_poll_check``)."""
    if run.lease_expires_at is not None:
        return run.lease_expires_at
    return _queued_deadline(run, run.created_at)


def optimization_run_lease_check(
    *, run: OptimizationRun, now: datetime | None = None
) -> OptimizationRun:
    """``run`` as it is after recovering it if its lease lapsed (a poll of the run is where a
    dead worker is noticed first); no query while the lease holds."""
    if lease_lapsed(run=run, now=now):
        lapsed_runs_recover(runs=OptimizationRun.objects.filter(pk=run.pk), now=now)
        run.refresh_from_db()
    return run
