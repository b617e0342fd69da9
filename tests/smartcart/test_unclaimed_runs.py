"""A run no worker starts is failed with the reason within ``SMARTCART_QUEUED_MAX_S``: by
beat's reaper, or by the next poll of it (page or API), so the shopper learns why and can try
again instead of waiting for a reaper minutes later. The clock is injected (``now``)."""

from datetime import timedelta

import pytest
from django.test import override_settings
from django.urls import reverse
from rest_framework.test import APIClient

from smartcart.models import OptimizationRun
from smartcart.services import (
    optimization_run_deadline,
    optimization_run_poll_check,
    optimization_runs_reap,
)
from smartcart.services.lease import lapsed_runs_recover

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("queued_max")]

Status = OptimizationRun.Status
PICKUP_S = 30


@pytest.fixture
def queued_max():
    with override_settings(SMARTCART_QUEUED_MAX_S=PICKUP_S):
        yield


def _queued(cart) -> OptimizationRun:
    return OptimizationRun.objects.create(
        cart=cart, cart_version=cart.version, status=Status.QUEUED, budget_ms=2000
    )


def test_the_reaper_fails_a_run_nobody_started_within_the_bound(cart):
    run = _queued(cart)
    assert optimization_runs_reap(now=run.created_at + timedelta(seconds=PICKUP_S - 1)) == 0
    assert optimization_runs_reap(now=run.created_at + timedelta(seconds=PICKUP_S + 1)) == 1
    run.refresh_from_db()
    assert run.status == Status.FAILED
    assert f"No optimiser started on your cart within {PICKUP_S} s" in run.error
    assert "Please try again" in run.error


def test_a_poll_after_the_deadline_fails_the_run_and_says_why(cart):
    run = _queued(cart)
    assert optimization_run_deadline(run=run) == run.created_at + timedelta(seconds=PICKUP_S)
    early = optimization_run_poll_check(run=run, now=run.created_at + timedelta(seconds=5))
    assert early.status == Status.QUEUED
    late = optimization_run_poll_check(
        run=run, now=run.created_at + timedelta(seconds=PICKUP_S + 1)
    )
    assert late.status == Status.FAILED
    assert "workers are busy or not running" in late.error


def test_a_run_queued_again_after_a_lapse_gets_a_fresh_pickup_deadline(
    cart, django_capture_on_commit_callbacks
):
    run = _queued(cart)
    created = run.created_at
    lapse = created + timedelta(minutes=5)
    OptimizationRun.objects.filter(pk=run.pk).update(
        status=Status.RUNNING, attempts=1, started_at=created, lease_expires_at=lapse
    )
    with django_capture_on_commit_callbacks(execute=False):
        recovered_at = lapse + timedelta(seconds=1)
        assert lapsed_runs_recover(runs=OptimizationRun.objects.all(), now=recovered_at) == 1
    run.refresh_from_db()
    assert run.status == Status.QUEUED
    # Created minutes ago, but queued again just now: not failed until its new deadline.
    assert optimization_runs_reap(now=recovered_at + timedelta(seconds=PICKUP_S - 1)) == 0
    assert optimization_runs_reap(now=recovered_at + timedelta(seconds=PICKUP_S + 1)) == 1


def _age(run: OptimizationRun, seconds: float) -> None:
    OptimizationRun.objects.filter(pk=run.pk).update(
        created_at=run.created_at - timedelta(seconds=seconds)
    )


def test_the_api_shows_failed_with_the_reason(shopper, cart):
    alice_api = APIClient()
    alice_api.force_authenticate(shopper)
    run = _queued(cart)
    url = f"/api/v1/cart/optimizations/{run.pk}/"
    assert alice_api.get(url).json()["status"] == "queued"
    _age(run, PICKUP_S + 1)
    body = alice_api.get(url).json()
    assert body["status"] == "failed"
    assert f"within {PICKUP_S} s" in body["error"]


def test_the_page_explains_and_offers_to_try_again(client, shopper, cart):
    client.force_login(shopper)
    run = _queued(cart)
    _age(run, PICKUP_S + 1)
    panel = client.get(
        reverse("cart_improve_status", args=[run.pk]), headers={"X-Requested-With": "fetch"}
    ).content.decode()
    assert "data-poll-url" not in panel  # the page stops polling
    assert "improve your cart</h2>" in panel
    assert "workers are busy or not running" in panel
    assert "Try again" in panel
