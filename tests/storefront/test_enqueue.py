"""``storefront.enqueue``: tasks sent by name after commit, eager in-process as ``.delay()``."""

from unittest import mock

import pytest
from celery import shared_task

from storefront.enqueue import task_enqueue, task_enqueue_on_commit

pytestmark = pytest.mark.django_db

_CALLS: list[dict] = []


@shared_task(name="tests.enqueue_probe")
def _probe_task(value: int, label: str = "") -> None:
    _CALLS.append({"value": value, "label": label})


@pytest.fixture(autouse=True)
def calls():
    _CALLS.clear()
    yield _CALLS
    _CALLS.clear()


def test_eager_runs_in_process_after_commit(calls, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        task_enqueue_on_commit("tests.enqueue_probe", kwargs={"value": 3, "label": "x"})
        assert calls == []  # nothing before the commit
    assert len(callbacks) == 1
    callbacks[0]()
    assert calls == [{"value": 3, "label": "x"}]


def test_matches_delay(calls):
    _probe_task.delay(value=5)
    task_enqueue("tests.enqueue_probe", kwargs={"value": 5})
    assert calls == [{"value": 5, "label": ""}, {"value": 5, "label": ""}]


def test_rollback_sends_nothing(calls, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        task_enqueue_on_commit("tests.enqueue_probe", kwargs={"value": 1})
    # The captured callback is what a commit would run; a rollback discards it unrun.
    assert calls == []
    assert len(callbacks) == 1


def test_queue_and_countdown_are_passed():
    with mock.patch.object(_probe_task, "apply_async") as send:
        task_enqueue("tests.enqueue_probe", kwargs={"value": 2}, queue="gpu", countdown=4)
    send.assert_called_once_with(kwargs={"value": 2}, queue="gpu", countdown=4)


def test_unknown_name_raises():
    with pytest.raises(KeyError):
        task_enqueue("tests.no_such_task")
