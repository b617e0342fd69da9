from datetime import timedelta

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone

from smartcart import services, tasks
from smartcart.models import OptimizationRun

pytestmark = pytest.mark.django_db
Status = OptimizationRun.Status


def _queued_run(cart, capture):
    with override_settings(SMARTCART_INLINE_MAX_MS=0), capture(execute=False):
        return services.optimization_run_create(cart=cart)


def test_task_options_survive_a_lost_worker():
    task = tasks.optimization_run_execute_task
    assert task.acks_late and task.reject_on_worker_lost
    assert task.name == "smartcart.optimization_run_execute"


def test_task_takes_the_id_and_stores_the_answer(cart, django_capture_on_commit_callbacks):
    run = _queued_run(cart, django_capture_on_commit_callbacks)
    tasks.optimization_run_execute_task.delay(run.pk)
    run.refresh_from_db()
    assert run.status == Status.DONE


def test_enqueue_sends_to_the_runs_queue(cart, django_capture_on_commit_callbacks, monkeypatch):
    run = _queued_run(cart, django_capture_on_commit_callbacks)
    sent = {}
    monkeypatch.setattr(
        tasks.optimization_run_execute_task,
        "apply_async",
        lambda kwargs, queue: sent.update(kwargs=kwargs, queue=queue),
    )
    services.optimization_run_enqueue(run=run)
    assert sent == {"kwargs": {"run_id": run.pk}, "queue": "cpu"}


def test_soft_time_limit_fails_the_run(cart, django_capture_on_commit_callbacks, monkeypatch):
    run = _queued_run(cart, django_capture_on_commit_callbacks)

    def too_slow(problem, **kwargs):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(services.common, "solve", too_slow)
    tasks.optimization_run_execute_task.delay(run.pk)
    run.refresh_from_db()
    assert run.status == Status.FAILED
    assert "out of time" in run.error


def test_reap_task_and_command(cart, django_capture_on_commit_callbacks, capsys):
    run = _queued_run(cart, django_capture_on_commit_callbacks)
    OptimizationRun.objects.filter(pk=run.pk).update(
        status=Status.RUNNING, started_at=timezone.now() - timedelta(hours=1)
    )
    assert tasks.optimization_runs_reap_task.delay() is not None
    run.refresh_from_db()
    assert run.status == Status.FAILED
    call_command("reap_optimization_runs")
    assert "Marked 0 stuck" in capsys.readouterr().out
