import dataclasses
from datetime import timedelta

import numpy as np
import pytest
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from gpu_engine import price_assignment
from gpu_engine.results import make_solution
from smartcart import selectors, services
from smartcart.models import OptimizationRun
from storefront.carts.pricing_summary import cart_pricing_summary
from storefront.carts.services import cart_line_set_quantity
from storefront.errors import Conflict, ValidationFailed
from storefront.models import CartLine, Merchant, Offer

pytestmark = pytest.mark.django_db

Status = OptimizationRun.Status
queued = override_settings(SMARTCART_INLINE_MAX_MS=0)


def test_inline_run_is_done_with_the_optimum(cart, shopper):
    run = services.optimization_run_create(cart=cart, requested_by=shopper)
    assert (run.status, run.route, run.attempts) == (Status.DONE, "inline", 1)
    assert run.requested_by == shopper
    assert run.current_total == 8199  # 3 x 25.00 + 4.99 + 2 x 1.00 at Dear Shop
    assert run.suggested_total == 6900  # 3 x 23.00, free shipping at Bundle Shop
    assert (run.savings, run.savings_percent) == (1299, 15.8)
    assert run.optimal and run.algorithm and run.device
    assert run.is_improvement and not run.is_stale
    assert [line["changed"] for line in run.suggestion["lines"]] == [True] * 3
    bundle = run.suggestion["merchants"][0]
    assert bundle["merchant_name"] == "Bundle Shop"
    assert (bundle["shipping"], bundle["missing_for_free_shipping"]) == (0, 0)
    assert run.build_ms >= 0 and run.solve_ms >= 0 and run.elapsed_ms >= run.solve_ms


def test_lines_read_by_the_caller_are_not_read_again_and_count_as_building(cart, shopper):
    found = dataclasses.replace(selectors.cart_lines_find(user=shopper), read_ms=5.0)
    with CaptureQueriesContext(connection) as queries:
        run = services.optimization_run_create(cart=found.cart, lines=found, requested_by=shopper)
    assert run.status == Status.DONE and run.cart_version == cart.version
    assert not any('"storefront_cartline"' in query["sql"] for query in queries)
    assert run.build_ms >= 5.0 and run.elapsed_ms >= 5.0 + run.solve_ms


def test_apply_rewrites_lines_and_bumps_version(cart, shopper):
    run = services.optimization_run_create(cart=cart)
    updated = services.optimization_run_apply(run=run, user=shopper)
    assert updated.version == run.cart_version + 1
    lines = CartLine.objects.filter(cart=cart).select_related("offer__merchant")
    assert {line.offer.merchant.name for line in lines} == {"Bundle Shop"}
    assert {line.unit_price_snapshot for line in lines} == {2300}
    assert cart_pricing_summary(cart=updated).total == run.suggested_total
    run.refresh_from_db()
    assert run.applied_at is not None and run.applied_by == shopper


def test_nothing_better_keeps_the_cart(cart):
    first = services.optimization_run_create(cart=cart)
    services.optimization_run_apply(run=first)
    again = services.optimization_run_create(cart=cart)
    assert again.savings == 0 and not again.is_improvement
    assert not any(line["changed"] for line in again.suggestion["lines"])
    # "True when nothing cheaper was found than the cart as it is" (the API's word), as the
    # price watch has always said it: an already optimal cart is kept.
    assert again.suggestion["kept_current"] is True


def test_a_worse_solver_answer_never_reaches_the_shopper(cart, monkeypatch):
    Merchant.objects.filter(name="Cheap Shop").update(base_fee=2000)
    cheap_id = str(Merchant.objects.get(name="Cheap Shop").pk)

    def out_of_time(problem, **kwargs):
        # What an approximate solver might return when its budget ran out: all at Cheap Shop,
        # 3 x 22.00 + 20.00 + 2 x 3.00 = 92.00, dearer than the cart's 81.99.
        choice = np.full(problem.n_items, list(problem.merchant_ids).index(cheap_id))
        total = sum(cost.cost for cost in price_assignment(problem, choice))
        return make_solution(
            problem, choice, total=total, optimal=False, algorithm="ga", device="cpu", elapsed_ms=1
        )

    monkeypatch.setattr(services.common, "solve", out_of_time)
    run = services.optimization_run_create(cart=cart)
    assert run.suggested_total == run.current_total == 8199 and run.savings == 0
    assert run.suggestion["kept_current"] is True
    assert not any(line["changed"] for line in run.suggestion["lines"])


@queued
def test_queued_run_executes_on_commit(cart, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        run = services.optimization_run_create(cart=cart, budget_ms=300)
    assert (run.status, run.route, run.budget_ms) == (Status.QUEUED, "cpu", 300)
    assert len(callbacks) == 1
    callbacks[0]()
    run.refresh_from_db()
    assert run.status == Status.DONE and run.attempts == 1
    assert run.queue_wait_ms is not None and run.suggested_total == 6900


@queued
def test_create_reuses_a_run_in_flight_for_the_same_version(cart):
    with transaction_that_never_commits():
        first = services.optimization_run_create(cart=cart)
        second = services.optimization_run_create(cart=cart)
        assert first.pk == second.pk


class transaction_that_never_commits:
    """Keeps on_commit callbacks (the enqueue) from running, like a request still open."""

    def __enter__(self):
        from django.db import transaction

        self.atomic = transaction.atomic()
        self.atomic.__enter__()

    def __exit__(self, *exc):
        from django.db import transaction

        transaction.set_rollback(True)
        return self.atomic.__exit__(*exc)


@queued
def test_execute_is_idempotent(cart, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        run = services.optimization_run_create(cart=cart)
    done = services.optimization_run_execute(run_id=run.pk)
    finished_at = done.finished_at
    again = services.optimization_run_execute(run_id=run.pk)
    assert again.status == Status.DONE and again.finished_at == finished_at
    assert again.attempts == 1


@queued
def test_execute_answers_for_the_cart_as_it_is_when_the_job_runs(
    cart, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        run = services.optimization_run_create(cart=cart)
    line = CartLine.objects.filter(cart=cart).first()
    cart_line_set_quantity(cart=cart, line_id=line.pk, quantity=2)
    done = services.optimization_run_execute(run_id=run.pk)
    assert done.cart_version == run.cart_version + 1
    assert not done.is_stale
    assert done.suggestion["lines"][0]["quantity"] == 2


@queued
def test_execute_fails_with_the_reason_when_the_cart_emptied(
    cart, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        run = services.optimization_run_create(cart=cart)
    CartLine.objects.filter(cart=cart).delete()
    failed = services.optimization_run_execute(run_id=run.pk)
    assert failed.status == Status.FAILED
    assert failed.error == "The cart is empty."


@queued
def test_a_run_whose_worker_keeps_dying_fails_after_max_attempts(
    cart, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        run = services.optimization_run_create(cart=cart)
    # Three deliveries that each died mid-job (acks_late redelivers them).
    OptimizationRun.objects.filter(pk=run.pk).update(status=Status.RUNNING, attempts=3)
    failed = services.optimization_run_execute(run_id=run.pk)
    assert failed.status == Status.FAILED
    assert "attempts" in failed.error


@queued
def test_a_redelivered_running_run_is_run_again(cart, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        run = services.optimization_run_create(cart=cart)
    OptimizationRun.objects.filter(pk=run.pk).update(status=Status.RUNNING, attempts=1)
    done = services.optimization_run_execute(run_id=run.pk)
    assert done.status == Status.DONE and done.attempts == 2


def test_inline_solver_crash_gives_a_failed_run_not_a_500(cart, monkeypatch):
    def boom(problem, **kwargs):
        raise RuntimeError("kernel fault")

    monkeypatch.setattr(services.common, "solve", boom)
    run = services.optimization_run_create(cart=cart)
    assert run.status == Status.FAILED
    assert "RuntimeError" in run.error and "kernel fault" not in run.error


@pytest.mark.parametrize("budget", [0, -1, 1.5, "1", True, 60_001])
def test_bad_budget_is_refused(cart, budget):
    with pytest.raises(ValidationFailed) as error:
        services.optimization_run_create(cart=cart, budget_ms=budget)
    assert error.value.field == "budget_ms"


def _apply_code(run) -> str:
    with pytest.raises(Conflict) as error:
        services.optimization_run_apply(run=run)
    return error.value.code


def test_apply_refuses_stale_and_changed_offers(cart):
    run = services.optimization_run_create(cart=cart)
    new_offer = Offer.objects.filter(pk=run.suggestion["lines"][1]["new_offer_id"])
    new_offer.update(stock=0)
    assert _apply_code(run) == "stock_changed"
    new_offer.update(stock=None, active=False)
    assert _apply_code(run) == "offer_unavailable"
    new_offer.update(active=True, unit_price=2299)
    assert _apply_code(run) == "price_changed"
    new_offer.update(unit_price=2300)
    Merchant.objects.filter(name="Bundle Shop").update(free_over=None)
    assert _apply_code(run) == "terms_changed"
    # Every refusal rolled back: the cart is as it was.
    assert CartLine.objects.filter(cart=cart, offer__merchant__name="Dear Shop").count() == 3
    Merchant.objects.filter(name="Bundle Shop").update(free_over=5000)
    line = CartLine.objects.filter(cart=cart).first()
    cart_line_set_quantity(cart=cart, line_id=line.pk, quantity=2)
    assert _apply_code(run) == "cart_changed"


@queued
def test_apply_refuses_unfinished_runs(cart, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        run = services.optimization_run_create(cart=cart)
    assert _apply_code(run) == "not_done"


def test_dismiss_is_idempotent_and_blocks_apply(cart):
    run = services.optimization_run_create(cart=cart)
    dismissed = services.optimization_run_dismiss(run=run)
    when = dismissed.dismissed_at
    assert services.optimization_run_dismiss(run=run).dismissed_at == when
    assert _apply_code(run) == "dismissed"


@queued
def test_reaper_fails_runs_stuck_past_the_time_limit(cart, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        stuck = services.optimization_run_create(cart=cart)
        line = CartLine.objects.filter(cart=cart).first()
        cart_line_set_quantity(cart=cart, line_id=line.pk, quantity=2)
        fresh = services.optimization_run_create(cart=cart)
    now = timezone.now()
    OptimizationRun.objects.filter(pk=stuck.pk).update(
        status=Status.RUNNING, started_at=now - timedelta(minutes=10)
    )
    OptimizationRun.objects.filter(pk=fresh.pk).update(status=Status.RUNNING, started_at=now)
    assert services.optimization_runs_reap(now=now) == 1
    stuck.refresh_from_db()
    fresh.refresh_from_db()
    assert stuck.status == Status.FAILED and "time limit" in stuck.error
    assert fresh.status == Status.RUNNING
    # A late answer from the lost worker cannot overwrite the reaper's verdict.
    assert services.optimization_run_execute(run_id=stuck.pk).status == Status.FAILED


@queued
def test_reaper_fails_runs_whose_message_was_lost(cart, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        run = services.optimization_run_create(cart=cart)
    later = timezone.now() + timedelta(hours=1)
    assert services.optimization_runs_reap(now=later) == 1
    run.refresh_from_db()
    assert run.status == Status.FAILED and "No optimiser started" in run.error
