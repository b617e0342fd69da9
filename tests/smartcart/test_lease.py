"""Leases on running runs (``smartcart.services.lease``): renewal, recovery of a lapsed run
(queued once more, then failed), and where a lapse is noticed (reaper, poll, click)."""

from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from smartcart.models import OptimizationRun
from smartcart.services import optimization_run_create, optimization_runs_reap
from smartcart.services.lease import (
    lapsed_runs_recover,
    lease_renew,
    optimization_run_deadline,
    optimization_run_lease_check,
)

pytestmark = pytest.mark.django_db

Status = OptimizationRun.Status


def _running(cart, *, attempts: int = 1, lapsed_s: float = 5) -> OptimizationRun:
    now = timezone.now()
    return OptimizationRun.objects.create(
        cart=cart,
        cart_version=cart.version,
        status=Status.RUNNING,
        route=OptimizationRun.Route.CPU,
        attempts=attempts,
        budget_ms=100,
        started_at=now - timedelta(seconds=30),
        lease_expires_at=now - timedelta(seconds=lapsed_s),
    )


@override_settings(SMARTCART_LEASE_S=10)
def test_renewal_extends_the_lease_but_never_inside_the_budget(cart):
    run = _running(cart)
    renewed_at = timezone.now()
    assert lease_renew(run=run)
    run.refresh_from_db()
    assert run.lease_expires_at >= renewed_at + timedelta(seconds=10)
    run.status = Status.DONE
    OptimizationRun.objects.filter(pk=run.pk).update(status=Status.FAILED)
    assert not lease_renew(run=run)


def test_a_lapsed_run_is_queued_once_then_failed(cart, django_capture_on_commit_callbacks):
    run = _running(cart, attempts=1)
    with django_capture_on_commit_callbacks(execute=True):
        assert lapsed_runs_recover(runs=OptimizationRun.objects.all()) == 1
    run.refresh_from_db()
    # In-process tasks: the retry ran at once, on this process.
    assert run.status == Status.DONE
    assert run.attempts == 2

    second = _running(cart, attempts=2)
    OptimizationRun.objects.filter(pk=run.pk).update(cart_version=cart.version + 100)
    assert lapsed_runs_recover(runs=OptimizationRun.objects.filter(pk=second.pk)) == 1
    second.refresh_from_db()
    assert second.status == Status.FAILED
    assert "lease lapsed" in second.error


def test_a_live_lease_is_left_alone_by_poll_and_reaper(cart):
    run = _running(cart, lapsed_s=-30)
    assert optimization_runs_reap() == 0
    assert optimization_run_lease_check(run=run).status == Status.RUNNING


def test_the_poll_and_the_reaper_notice_a_lapse(cart):
    run = _running(cart, attempts=2)
    assert optimization_run_lease_check(run=run).status == Status.FAILED
    other = _running(cart, attempts=2)
    optimization_runs_reap()
    other.refresh_from_db()
    assert other.status == Status.FAILED


@override_settings(SMARTCART_INLINE_MAX_MS=0)
def test_a_click_replaces_a_run_whose_worker_died(
    cart, shopper, django_capture_on_commit_callbacks
):
    dead = _running(cart, attempts=2)
    with django_capture_on_commit_callbacks(execute=True):
        run = optimization_run_create(cart=cart, requested_by=shopper)
    dead.refresh_from_db()
    run.refresh_from_db()
    assert dead.status == Status.FAILED
    assert run.pk != dead.pk
    assert run.status == Status.DONE


@override_settings(SMARTCART_QUEUED_MAX_S=30)
def test_the_deadline_is_the_lease_else_the_pickup_bound(cart):
    run = _running(cart, lapsed_s=-4)
    assert optimization_run_deadline(run=run) == run.lease_expires_at
    run.lease_expires_at = None
    expected = run.created_at + timedelta(seconds=30)
    assert optimization_run_deadline(run=run) == expected
