"""What the storefront's race tests share: the marks that run them on PostgreSQL only (row locks;
SQLite has none to test) and ``race``, which starts calls at the same instant."""

import threading
from collections.abc import Callable, Sequence

import pytest
from django.db import connection, connections

# A module's ``pytestmark``: each test commits for real (other threads must see its rows).
POSTGRES_RACE_MARKS = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="needs PostgreSQL (DATABASE_URL) row locks"
    ),
]


def race(calls: Sequence[Callable[[], object]]) -> list[object]:
    """Runs the calls at once, one thread and database connection each, released together by
    a barrier; each call's result, or the exception it raised (the tests inspect both)."""
    barrier = threading.Barrier(len(calls))
    results: list[object] = [None] * len(calls)

    def run(index: int, call: Callable[[], object]) -> None:
        try:
            barrier.wait()
            results[index] = call()
        except Exception as error:  # the test inspects every outcome
            results[index] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results
