"""A lost job never blocks Improve cart, and one cart version has one job in flight."""

from datetime import timedelta

import pytest
from celery.exceptions import Retry
from django.db import IntegrityError, OperationalError, transaction
from django.test import override_settings
from django.utils import timezone

from smartcart import services, tasks
from smartcart.models import OptimizationRun

pytestmark = pytest.mark.django_db
Status = OptimizationRun.Status
queued = override_settings(SMARTCART_INLINE_MAX_MS=0)


def _queued_run(cart, capture) -> OptimizationRun:
    with capture(execute=False):
        return services.optimization_run_create(cart=cart)


@queued
@pytest.mark.parametrize(
    ("status", "age", "reason"),
    [
        (Status.RUNNING, timedelta(seconds=120 + 30 + 1), "time limit"),
        (Status.QUEUED, timedelta(seconds=900 + 1), "No optimiser started"),
    ],
)
def test_a_run_left_by_a_lost_worker_does_not_block_a_new_click(
    cart, django_capture_on_commit_callbacks, status, age, reason
):
    lost = _queued_run(cart, django_capture_on_commit_callbacks)
    long_ago = timezone.now() - age
    OptimizationRun.objects.filter(pk=lost.pk).update(
        status=status, started_at=long_ago, created_at=long_ago
    )
    with django_capture_on_commit_callbacks(execute=False) as enqueued:
        fresh = services.optimization_run_create(cart=cart)
    assert fresh.pk != lost.pk
    assert (fresh.status, fresh.cart_version) == (Status.QUEUED, lost.cart_version)
    assert len(enqueued) == 1
    lost.refresh_from_db()
    # Failed by the create itself: celery beat's reaper is not needed for this.
    assert lost.status == Status.FAILED and reason in lost.error


@queued
def test_a_run_within_its_time_limit_is_still_returned(cart, django_capture_on_commit_callbacks):
    first = _queued_run(cart, django_capture_on_commit_callbacks)
    recently = timezone.now() - timedelta(seconds=120)
    OptimizationRun.objects.filter(pk=first.pk).update(status=Status.RUNNING, started_at=recently)
    with django_capture_on_commit_callbacks(execute=False) as enqueued:
        again = services.optimization_run_create(cart=cart)
    assert again.pk == first.pk and enqueued == []


@queued
def test_the_losing_concurrent_click_gets_the_winners_run(
    cart, django_capture_on_commit_callbacks, monkeypatch
):
    winner = _queued_run(cart, django_capture_on_commit_callbacks)
    # The insert is refused by the constraint; the loser returns the winner's run and
    # reaps nothing (the winner is not stale).
    monkeypatch.setattr(
        services.create, "stale_runs_fail", lambda *a, **k: pytest.fail("reaped a live run")
    )
    with django_capture_on_commit_callbacks(execute=False) as enqueued:
        loser = services.optimization_run_create(cart=cart)
    assert loser.pk == winner.pk and enqueued == []
    assert OptimizationRun.objects.filter(cart=cart).count() == 1


@queued
def test_the_database_allows_one_run_in_flight_per_cart_version(
    cart, django_capture_on_commit_callbacks
):
    run = _queued_run(cart, django_capture_on_commit_callbacks)
    copy = {"cart": cart, "cart_version": run.cart_version, "status": Status.RUNNING}
    with pytest.raises(IntegrityError), transaction.atomic():
        OptimizationRun.objects.create(**copy)
    # Finished, dismissed or of another version: no limit.
    OptimizationRun.objects.create(**{**copy, "status": Status.FAILED})
    OptimizationRun.objects.create(**{**copy, "dismissed_at": timezone.now()})
    OptimizationRun.objects.create(**{**copy, "cart_version": run.cart_version + 1})


@queued
def test_a_database_error_while_executing_leaves_the_run_retriable(
    cart, django_capture_on_commit_callbacks, monkeypatch
):
    run = _queued_run(cart, django_capture_on_commit_callbacks)

    def database_gone(*, cart, **_):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(services.execute, "cart_problem_build", database_gone)
    with pytest.raises(OperationalError):
        services.optimization_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert (run.status, run.attempts, run.error) == (Status.RUNNING, 1, "")
    assert OperationalError in tasks.optimization_run_execute_task.autoretry_for
    monkeypatch.undo()
    retried = services.optimization_run_execute(run_id=run.pk)
    assert (retried.status, retried.attempts) == (Status.DONE, 2)


@queued
def test_the_task_retries_database_errors(cart, django_capture_on_commit_callbacks, monkeypatch):
    run = _queued_run(cart, django_capture_on_commit_callbacks)

    def database_gone(*, cart, **_):
        raise OperationalError("the database is restarting")

    monkeypatch.setattr(services.execute, "cart_problem_build", database_gone)
    with pytest.raises(Retry):
        tasks.optimization_run_execute_task.apply(args=[run.pk])
    run.refresh_from_db()
    assert run.status == Status.RUNNING
    # In-process (no broker) there is no later retry: the run fails rather than hang.
    OptimizationRun.objects.filter(pk=run.pk).update(status=Status.QUEUED)
    services.optimization_run_enqueue(run=run)
    run.refresh_from_db()
    assert run.status == Status.FAILED and "Please try again" in run.error


@queued
def test_a_job_that_cannot_be_sent_fails_its_run_at_once(
    cart, django_capture_on_commit_callbacks, monkeypatch
):
    run = _queued_run(cart, django_capture_on_commit_callbacks)

    def broker_down(*args, **kwargs):
        raise ConnectionRefusedError("redis is down")

    monkeypatch.setattr(tasks.optimization_run_execute_task, "apply_async", broker_down)
    services.optimization_run_enqueue(run=run)
    run.refresh_from_db()
    assert run.status == Status.FAILED and "could not be started" in run.error
