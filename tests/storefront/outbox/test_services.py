"""The outbox: a task is a row written with its cause, sent after the commit, retried by the
relay with backoff until delivered; nothing raises into the committed request."""

from datetime import timedelta

import pytest
from celery import shared_task
from django.db import transaction
from django.test import override_settings
from django.utils import timezone
from kombu.exceptions import OperationalError

from storefront.config.celery import app
from storefront.enqueue import task_enqueue, task_enqueue_on_commit
from storefront.outbox import services as outbox
from storefront.outbox.models import OutboxMessage

pytestmark = pytest.mark.django_db

_CALLS: list[int] = []
_FAILING: set[int] = set()


@shared_task(name="tests.outbox_probe")
def _probe_task(value: int) -> None:
    if value in _FAILING:
        raise RuntimeError(f"probe {value} failed")
    _CALLS.append(value)


@pytest.fixture(autouse=True)
def calls(monkeypatch):
    _CALLS.clear()
    _FAILING.clear()
    # The in-process relay is exercised on its own; here it must not run by the clock.
    monkeypatch.setattr(outbox, "_last_in_process_relay", float("inf"))
    yield _CALLS
    _CALLS.clear()
    _FAILING.clear()


def _due_now() -> None:
    OutboxMessage.objects.update(next_attempt_at=timezone.now() - timedelta(seconds=1))


@pytest.fixture
def broker_down(monkeypatch):
    """Celery not eager, and every publish refused as by a Redis that is down."""
    sent: list[tuple[str, dict]] = []
    state = {"down": True}

    def send(name, /, **options):
        if state["down"]:
            raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
        sent.append((name, options))

    monkeypatch.setattr("storefront.outbox.services.task_send", send)
    monkeypatch.setattr("storefront.enqueue.task_send", send)
    saved, app.conf.task_always_eager = app.conf.task_always_eager, False
    try:
        yield state, sent
    finally:
        app.conf.task_always_eager = saved


def test_the_row_is_written_with_the_change_and_delivered_after_commit(
    calls, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        task_enqueue_on_commit("tests.outbox_probe", args=[7])
        message = OutboxMessage.objects.get()
        assert message.status == OutboxMessage.Status.PENDING
        assert calls == []
    assert calls == [7]
    message.refresh_from_db()
    assert message.status == OutboxMessage.Status.DELIVERED
    assert message.attempts == 1
    assert message.delivered_at is not None


def test_a_rollback_leaves_no_row_and_sends_nothing(calls, django_capture_on_commit_callbacks):
    with (
        django_capture_on_commit_callbacks(execute=True),
        pytest.raises(ZeroDivisionError),
        transaction.atomic(),
    ):
        task_enqueue_on_commit("tests.outbox_probe", args=[1])
        raise ZeroDivisionError
    assert calls == []
    assert not OutboxMessage.objects.exists()


def test_an_in_process_task_error_is_recorded_not_raised_and_retried(
    calls, django_capture_on_commit_callbacks
):
    _FAILING.add(3)
    with django_capture_on_commit_callbacks(execute=True):
        task_enqueue_on_commit("tests.outbox_probe", args=[3])
    message = OutboxMessage.objects.get()
    assert message.status == OutboxMessage.Status.PENDING
    assert message.attempts == 1
    assert "RuntimeError: probe 3 failed" in message.last_error
    assert message.next_attempt_at > timezone.now()
    assert outbox.outbox_relay().delivered == 0  # not due yet: backing off

    _FAILING.clear()
    _due_now()
    assert outbox.outbox_relay() == outbox.RelayResult(delivered=1, failed=0)
    assert calls == [3]
    message.refresh_from_db()
    assert (message.status, message.attempts) == (OutboxMessage.Status.DELIVERED, 2)


@override_settings(OUTBOX_MAX_ATTEMPTS=2)
def test_in_process_errors_give_up_and_the_admin_retry_reopens(
    calls, django_capture_on_commit_callbacks
):
    _FAILING.add(4)
    with django_capture_on_commit_callbacks(execute=True):
        task_enqueue_on_commit("tests.outbox_probe", args=[4])
    _due_now()
    assert outbox.outbox_relay().failed == 1
    message = OutboxMessage.objects.get()
    assert (message.status, message.attempts) == (OutboxMessage.Status.FAILED, 2)
    _due_now()
    assert outbox.outbox_relay() == outbox.RelayResult()  # given up: the relay leaves it

    _FAILING.clear()
    assert outbox.outbox_messages_retry(message_ids=[message.pk]).delivered == 1
    assert calls == [4]


def test_the_backoff_doubles_up_to_its_cap():
    with override_settings(OUTBOX_RETRY_FIRST_S=2, OUTBOX_RETRY_MAX_S=60):
        assert [outbox._retry_delay(n) for n in range(1, 8)] == [2, 4, 8, 16, 32, 60, 60]


def test_with_the_broker_down_the_commit_stands_and_the_relay_sends_later(
    broker_down, django_capture_on_commit_callbacks
):
    state, sent = broker_down
    with django_capture_on_commit_callbacks(execute=True):
        task_enqueue_on_commit("tests.outbox_probe", args=[5], queue="cpu", countdown=30)
        task_enqueue_on_commit("tests.outbox_probe", args=[6])
    assert sent == []
    first, second = OutboxMessage.objects.order_by("pk")
    assert first.last_error.startswith("OperationalError")
    assert first.run_after is not None

    _due_now()
    # Still down: the first refusal ends the run, the rest waits for the next one untried.
    assert outbox.outbox_relay() == outbox.RelayResult(delivered=0, failed=1)
    second.refresh_from_db()
    assert second.attempts == 1  # only its own send after the commit

    state["down"] = False
    _due_now()
    assert outbox.outbox_relay() == outbox.RelayResult(delivered=2, failed=0)
    (name, options), (_, plain) = sent
    assert name == "tests.outbox_probe" and options["queue"] == "cpu"
    assert 0 < options["countdown"] <= 30  # what is left of it, not the whole again
    assert plain == {"args": [6], "kwargs": {}, "queue": None, "countdown": None}
    assert set(OutboxMessage.objects.values_list("status", flat=True)) == {"delivered"}
    assert outbox.outbox_relay() == outbox.RelayResult()  # sent once


@override_settings(OUTBOX_MAX_ATTEMPTS=1)
def test_a_broker_outage_is_waited_for_however_long(broker_down):
    task_enqueue_on_commit("tests.outbox_probe", args=[1])
    for _ in range(3):
        _due_now()
        outbox.outbox_relay()
    message = OutboxMessage.objects.get()
    assert message.status == OutboxMessage.Status.PENDING
    assert message.attempts == 3


def test_send_now_keeps_the_task_when_the_broker_refuses_it(broker_down):
    state, sent = broker_down
    task_enqueue("tests.outbox_probe", args=[8], countdown=2)
    message = OutboxMessage.objects.get()
    assert (message.attempts, message.task_name, message.args) == (1, "tests.outbox_probe", [8])
    state["down"] = False
    _due_now()
    assert outbox.outbox_relay().delivered == 1
    assert [name for name, _ in sent] == ["tests.outbox_probe"]


def test_send_now_raises_for_a_caller_that_fails_its_own_job(broker_down):
    with pytest.raises(OperationalError):
        task_enqueue("tests.outbox_probe", args=[9], durable=False)
    assert not OutboxMessage.objects.exists()


def test_coalesced_work_is_kept_once_while_pending(broker_down):
    state, sent = broker_down
    for _ in range(3):
        task_enqueue("tests.outbox_probe", args=[10], coalesce=True)
    task_enqueue("tests.outbox_probe", args=[11], coalesce=True)
    assert OutboxMessage.objects.count() == 2
    state["down"] = False
    _due_now()
    outbox.outbox_relay()
    # Delivered: the next request is new work again.
    task_enqueue("tests.outbox_probe", args=[10], coalesce=True)
    assert len(sent) == 3


def test_send_now_in_process_raises_the_task_error_as_delay_did():
    _FAILING.add(12)
    with pytest.raises(RuntimeError):
        task_enqueue("tests.outbox_probe", args=[12])
    assert not OutboxMessage.objects.exists()


def test_a_message_whose_sender_died_is_sent_once_its_claim_lapses(calls):
    outbox.outbox_message_create(task_name="tests.outbox_probe", args=[13])
    assert outbox.outbox_relay() == outbox.RelayResult()  # its writer still holds it
    _due_now()
    assert outbox.outbox_relay().delivered == 1
    assert calls == [13]


def test_the_in_process_relay_runs_at_most_once_per_interval(calls, monkeypatch):
    monkeypatch.setattr(outbox, "_last_in_process_relay", 0.0)
    outbox.outbox_message_create(task_name="tests.outbox_probe", args=[14], due_in_s=0)
    assert outbox.outbox_relay_in_process().delivered == 1
    outbox.outbox_message_create(task_name="tests.outbox_probe", args=[15], due_in_s=0)
    assert outbox.outbox_relay_in_process() == outbox.RelayResult()
    assert calls == [14]


def test_delivered_messages_are_purged_after_the_retention(
    calls, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        task_enqueue_on_commit("tests.outbox_probe", args=[16])
    pending = outbox.outbox_message_create(task_name="tests.outbox_probe", args=[17])
    OutboxMessage.objects.filter(status="delivered").update(
        delivered_at=timezone.now() - timedelta(days=8)
    )
    with override_settings(OUTBOX_RETENTION_S=7 * 24 * 3600):
        assert outbox.outbox_messages_purge() == 1
    assert list(OutboxMessage.objects.values_list("pk", flat=True)) == [pending.pk]
