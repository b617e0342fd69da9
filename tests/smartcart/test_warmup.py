import threading

import pytest

from smartcart import warmup


@pytest.mark.parametrize(
    ("argv", "environ", "expected"),
    [
        (["/venv/bin/gunicorn", "storefront.wsgi"], {}, True),
        (["manage.py", "runserver"], {"RUN_MAIN": "true"}, True),
        (["manage.py", "runserver"], {}, False),  # the autoreloader's watcher
        (["manage.py", "runserver", "--noreload"], {}, True),
        (["manage.py", "migrate"], {}, False),
        (["/venv/bin/pytest", "tests"], {}, False),
        (["/venv/bin/celery", "-A", "storefront", "worker"], {}, False),
        ([], {}, False),
    ],
)
def test_only_web_servers_warm_up_at_start(argv, environ, expected):
    assert warmup.is_web_server_process(argv, environ) is expected


def test_not_under_tests():
    assert warmup.web_warmup_start() is False


@pytest.fixture
def fresh_process(monkeypatch):
    """A process that has not warmed up yet, whose warm-up only records that it ran."""
    calls = []
    monkeypatch.setattr(warmup, "engine_warmup", lambda: calls.append("warm"))
    monkeypatch.setattr(warmup, "_done", threading.Event())
    return calls


def test_solo_worker_warms_up_once_before_its_first_job(fresh_process):
    from celery.concurrency.solo import TaskPool

    class Consumer:
        pool = TaskPool()  # sends worker_process_init, which starts the warm-up thread

    warmup.on_worker_ready(sender=Consumer())
    assert fresh_process == ["warm"]


def test_prefork_parent_never_warms_up(fresh_process):
    from celery.concurrency.prefork import TaskPool

    class Consumer:
        pool = TaskPool.__new__(TaskPool)

    warmup.on_worker_ready(sender=Consumer())
    assert fresh_process == []


def test_prefork_child_warms_up_in_a_thread(fresh_process):
    warmup.on_worker_process_init()
    warmup.engine_warmup_once()  # waits for the thread
    assert fresh_process == ["warm"]


def test_engine_warmup_logs_failures_instead_of_raising(monkeypatch, caplog):
    import gpu_engine

    def broken():
        raise RuntimeError("no driver")

    monkeypatch.setattr(gpu_engine, "warmup", broken)
    warmup.engine_warmup()
    assert "warm-up failed" in caplog.text
